package config

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// chunkMinSize is the size from which a configuration file is parsed one
// top-level block at a time (see parseHCL).
const chunkMinSize = 64 << 10

// maxParseWorkers bounds the goroutines that parse one file's chunks.
const maxParseWorkers = 8

// parseHCL parses one configuration file.
//
// hclsyntax lexes a whole file into one token slice (96 bytes a token) before
// it parses, and the slice grows by a quarter at a time once it is large, so
// lexing allocates several times the final slice. Large files are therefore
// parsed in chunks of top-level blocks, each with its true start position so
// that every range is the one a whole-file parse gives, and the chunks'
// bodies are merged; the chunks are also parsed in parallel, on every
// core. The result is the same as
// hclsyntax.ParseConfig's: when a chunk has any diagnostic or a top-level
// argument (whose redefinition check spans the file), the whole file is
// parsed at once instead, so diagnostics are always exactly hclsyntax's.
func parseHCL(src []byte, name string) (*hcl.File, hcl.Diagnostics) {
	if len(src) >= chunkMinSize {
		if f, ok := parseChunks(src, name); ok {
			return f, nil
		}
	}
	return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
}

// parseChunks parses src in chunks that end after a line holding only a
// closing brace (how every formatted top-level block ends). ok is false when
// the chunked parse cannot stand for the whole-file parse.
//
// Why the chunks give the whole file's result: a chunk that parses without
// any diagnostic ends with the lexer and the parser at the top level, after a
// complete block and its newline (an unterminated string, heredoc, comment or
// bracket is a diagnostic). Lexing and parsing are deterministic from left to
// right, so the whole-file parse reaches the same state at the same byte and
// continues from there exactly as a fresh parse of the next chunk does.
//
// The chunks are parsed concurrently, one contiguous run of chunks per
// processor, and merged in source order.
func parseChunks(src []byte, name string) (*hcl.File, bool) {
	if len(src) == 0 {
		return nil, false
	}
	chunks := splitChunks(src)
	bodies := make([]*hclsyntax.Body, len(chunks))
	var failed atomic.Bool
	parseRun := func(lo, hi int) {
		for i := lo; i < hi && !failed.Load(); i++ {
			cb, ok := parseChunk(src[chunks[i].start:chunks[i].end], name, chunks[i].pos)
			if !ok || len(cb.Attributes) > 0 {
				failed.Store(true)
				return
			}
			bodies[i] = cb
		}
	}
	inRuns(len(chunks), min(runtime.GOMAXPROCS(0), maxParseWorkers), parseRun)
	if failed.Load() {
		return nil, false
	}
	body := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, Blocks: make(hclsyntax.Blocks, 0, len(chunks))}
	for i, cb := range bodies {
		if i == 0 {
			body.SrcRange = cb.SrcRange
		} else {
			body.SrcRange = hcl.RangeBetween(body.SrcRange, cb.SrcRange)
		}
		body.EndRange = cb.EndRange
		body.Blocks = append(body.Blocks, cb.Blocks...)
	}
	return &hcl.File{Body: body, Bytes: src, Nav: blockNav{body}}, true
}

// parseChunk parses one chunk with hclsyntax. ok is false when the chunk
// has a diagnostic.
func parseChunk(chunk []byte, name string, pos hcl.Pos) (*hclsyntax.Body, bool) {
	f, diags := hclsyntax.ParseConfig(chunk, name, pos)
	if len(diags) > 0 || f == nil {
		return nil, false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	return body, ok
}

// chunk is one chunk of a file: src[start:end], which starts at pos.
type chunk struct {
	start, end int
	pos        hcl.Pos
}

// splitChunks splits src into chunks that each end after a line holding
// only "}" (see chunkEnd).
func splitChunks(src []byte) []chunk {
	var chunks []chunk
	pos := hcl.InitialPos
	for start := 0; start < len(src); {
		end := chunkEnd(src, start)
		chunks = append(chunks, chunk{start, end, pos})
		pos = advance(pos, src[start:end])
		start = end
	}
	return chunks
}

// chunkEnd returns the end of the chunk that starts at start: just after the
// first line that holds only "}", or the end of src.
func chunkEnd(src []byte, start int) int {
	for i := start; i < len(src); {
		nl := bytes.IndexByte(src[i:], '\n')
		if nl < 0 {
			return len(src)
		}
		line := bytes.TrimRight(src[i:i+nl], "\r")
		i += nl + 1
		if len(line) == 1 && line[0] == '}' {
			return i
		}
	}
	return len(src)
}

// advance returns the position after chunk, which starts at pos. Columns are
// not needed: every chunk but the last ends with a newline.
func advance(pos hcl.Pos, chunk []byte) hcl.Pos {
	return hcl.Pos{
		Line:   pos.Line + bytes.Count(chunk, []byte{'\n'}),
		Column: 1,
		Byte:   pos.Byte + len(chunk),
	}
}

// blockNav is the hcled navigation of a chunk-parsed file: what
// hclsyntax.ParseConfig's does, on the merged body.
type blockNav struct {
	root *hclsyntax.Body
}

// block returns the top-level block containing offset, or nil.
func (n blockNav) block(offset int) *hclsyntax.Block {
	blocks := n.root.Blocks
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].Range().End.Byte > offset })
	if i < len(blocks) && blocks[i].Range().ContainsOffset(offset) {
		return blocks[i]
	}
	return nil
}

// ContextString implements hcled.ContextString.
func (n blockNav) ContextString(offset int) string {
	if b := n.block(offset); b != nil {
		return blockHeader(b.Type, b.Labels)
	}
	return ""
}

// blockHeader is a block's header as hclsyntax's navigation writes it:
// its type, then each label quoted.
func blockHeader(typ string, labels []string) string {
	var h strings.Builder
	h.WriteString(typ)
	for _, l := range labels {
		fmt.Fprintf(&h, " %q", l)
	}
	return h.String()
}

// ContextDefRange implements hcled.ContextDefRange.
func (n blockNav) ContextDefRange(offset int) hcl.Range {
	if b := n.block(offset); b != nil {
		return b.DefRange()
	}
	return hcl.Range{}
}
