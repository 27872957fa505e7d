package config

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// Limits on what Load accepts, so that hostile input is a diagnostic within
// bounded time and memory, never a crash, a stack overflow or an exhausted
// machine. docs/language.md ("Limits") lists them with their diagnostics.
const (
	// MaxFileSize is the largest configuration, variables or file() input read.
	MaxFileSize = 16 << 20
	// MaxConfigSize is the most bytes of configuration, *.auto.vars.hcl and
	// --var-file files one load reads in total.
	MaxConfigSize = 32 << 20
	// MaxTokens is the most HCL tokens (words, numbers, strings,
	// punctuation, newlines) in all the files of one load. The parser and
	// the evaluator take memory in proportion to the tokens; the limit is
	// about twice the tokens of the largest generated benchmark
	// configuration (5,000 tenants, 20,000 models).
	MaxTokens = 4_000_000
	// MaxNesting is the deepest nesting of blocks, brackets, string
	// templates and chained operators in one expression. The parser and the
	// evaluator recurse once per level; the limit is checked before parsing.
	MaxNesting = 1000
	// MaxBlocks is the most top-level blocks in all the files of one load.
	MaxBlocks = 100_000
	// MaxInstances is the most instances one for_each or count may produce.
	MaxInstances = 100_000
	// MaxTotalInstances is the most instances of all blocks together (a
	// block without for_each or count is one instance).
	MaxTotalInstances = 200_000
	// MaxCollection is the most elements a function may return in one
	// collection; setproduct and flatten check it before they build the
	// result.
	MaxCollection = 100_000
	// MaxForIterations is the most elements all the for expressions of one
	// load iterate over together (a for nested in another counts its
	// collection once per iteration of the outer one).
	MaxForIterations = 200_000
	// MaxFileDiagnostics is the most syntax errors reported for one file;
	// the rest are counted in one more diagnostic.
	MaxFileDiagnostics = 100
	// MaxValueSize is the largest size of one value: a local value, a
	// block argument, for_each, a variable's value, a function's argument
	// or result, an operand of == or !=, a conditional's result. A value's
	// size is the bytes of its strings, keys and numbers' digits plus
	// ElementSize for every element, number, bool and null, counting a
	// part as often as the value holds it: that is how often a comparison,
	// a conversion or jsonencode walks it. A list that holds another
	// twice, level after level, doubles at each level; its size is
	// measured by a walk that stops at the limit.
	MaxValueSize = 64 << 20
	// ElementSize is what each element, number, bool and null adds to a
	// value's size, about what it takes in memory.
	ElementSize = 64
	// MaxEvalBytes is the most bytes of values one load's evaluation may
	// handle in all: the sizes of every value measured against
	// MaxValueSize, each time it is measured, weighted by what the
	// operation it is measured for costs (see weights): a measure of the
	// work of the evaluation. It bounds the time and the memory of the
	// evaluation as a whole (what functions and templates build is
	// measured, so it holds about this much at most; other expressions
	// build no more than their source and the for expressions' iterations
	// allow); the generated benchmark configurations use 2.5% (1,000
	// tenants and 5,000 models in for_each blocks) and 12% (5,000 and
	// 20,000) of it.
	MaxEvalBytes = 1 << 30
)

// The diagnostic of invalid UTF-8, worded as hclsyntax's.
const (
	summaryEncoding = "Invalid character encoding"
	detailEncoding  = "All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor."
)

// sourceBudget is what is left of the per-load limits while files are read.
type sourceBudget struct {
	bytes, tokens, blocks int
	// hooks receives, in source order, the offsets where the expressions
	// limitExprs rewrites start: the keyword "for" outside strings and
	// comments (every for expression and template for directive), the
	// operators ==, != and ?, and the ${ and %{ of string templates.
	hooks []int
}

// newSourceBudget returns the budget of one load.
func newSourceBudget() sourceBudget {
	return sourceBudget{bytes: MaxConfigSize, tokens: MaxTokens, blocks: MaxBlocks}
}

// Kinds of nesting level in scanSource.
const (
	lvBody    = iota // top level, a block body or an object: newlines separate items
	lvParen          // ( ... ): newlines ignored
	lvBracket        // [ ... ] and { for ... }: newlines ignored
	lvInterp         // ${ ... } or %{ ... } inside a template
	lvString         // "..." quoted template
	lvHeredoc        // <<EOT heredoc template
)

// scanLevel is one open nesting level of scanSource.
type scanLevel struct {
	kind int
	// ops counts the operators and openers of the current item of this
	// level: each adds at most one level to the syntax tree.
	ops int
	// marker ends a heredoc.
	marker []byte
	// chained is whether closing this level adds to its parent's ops: a
	// closed bracket may be indexed, called or operated on again, while a
	// string or an interpolation is a flat part of its template.
	chained bool
}

// CheckSource checks one HCL file against MaxTokens and MaxNesting and that
// it is valid UTF-8, before it is parsed; it returns one diagnostic at the
// first place that fails, or nil.
func CheckSource(name string, src []byte) *hcl.Diagnostic {
	b := newSourceBudget()
	return scanSource(name, src, &b, false)
}

// scanSource is CheckSource charged to budget b. It reads src once,
// tracking just enough of HCL's lexical structure (strings, heredocs,
// comments, templates) to bound the depth of the syntax tree the parser
// would build: each open bracket, block or template is a level, and each
// operator or opener in the current item (between commas, or newlines where
// newlines end an item) may nest the tree once more. The count is an upper
// bound, so it never lets through what would recurse deeper than MaxNesting.
// Tokens are counted approximately (a run of word characters, a
// punctuation character, a newline, a string literal). topBlocks charges
// the top-level blocks to b.blocks.
func scanSource(name string, src []byte, b *sourceBudget, topBlocks bool) *hcl.Diagnostic {
	stack := make([]scanLevel, 1, 16)
	stack[0] = scanLevel{kind: lvBody}
	ops := 0 // sum of stack[*].ops
	tokens := 0
	inWord := false
	fail := func(off int, summary, detail string) *hcl.Diagnostic {
		start := posAt(src, off)
		end := start
		if off < len(src) {
			_, size := utf8.DecodeRune(src[off:])
			end = hcl.Pos{Line: start.Line, Column: start.Column + 1, Byte: off + size}
		}
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   detail,
			Subject:  &hcl.Range{Filename: name, Start: start, End: end},
		}
	}
	tooDeep := func(off int) *hcl.Diagnostic {
		return fail(off, "Nesting too deep", fmt.Sprintf("Blocks, brackets, string templates and chained operators are nested more than %d levels deep here (config.MaxNesting); gpuform refuses the file before parsing it.", MaxNesting))
	}
	push := func(off, kind int, marker []byte, chained bool) *hcl.Diagnostic {
		stack = append(stack, scanLevel{kind: kind, marker: marker, chained: chained})
		if len(stack)-1+ops > MaxNesting {
			return tooDeep(off)
		}
		return nil
	}
	var op func(off int) *hcl.Diagnostic
	pop := func(off int) *hcl.Diagnostic {
		if len(stack) == 1 {
			return nil
		}
		closed := stack[len(stack)-1]
		ops -= closed.ops
		stack = stack[:len(stack)-1]
		if closed.chained {
			return op(off)
		}
		return nil
	}
	op = func(off int) *hcl.Diagnostic {
		stack[len(stack)-1].ops++
		ops++
		if len(stack)-1+ops > MaxNesting {
			return tooDeep(off)
		}
		return nil
	}
	endItem := func() {
		top := &stack[len(stack)-1]
		ops -= top.ops
		top.ops = 0
	}
	for i := 0; i < len(src); {
		c := src[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return fail(i, summaryEncoding, detailEncoding)
			}
			if stack[len(stack)-1].kind < lvString && !inWord {
				inWord = true
				tokens++
			}
			i += size
			continue
		}
		if tokens > b.tokens {
			return fail(i, "Configuration too large", fmt.Sprintf("The configuration has more than %d tokens (config.MaxTokens) in all its files; gpuform stops reading here.", MaxTokens))
		}
		top := &stack[len(stack)-1]
		switch top.kind {
		case lvString:
			// Skip the plain text of the string at once.
			for c != '"' && c != '\\' && c != '$' && c != '%' && c != '\n' && c < utf8.RuneSelf {
				i++
				if i == len(src) {
					break
				}
				c = src[i]
			}
			if i == len(src) || c >= utf8.RuneSelf {
				continue
			}
			switch {
			case c == '\\':
				// Skip the escaped character unless it is not ASCII: the
				// loop checks its encoding.
				i++
				if i < len(src) && src[i] < utf8.RuneSelf {
					i++
				}
				continue
			case c == '"':
				pop(i)
			case c == '\n':
				pop(i) // unterminated: the parser reports it
				tokens++
				if stack[len(stack)-1].kind == lvBody {
					endItem()
				}
			case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{':
				i += 3
				continue
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				tokens += 2
				b.hooks = append(b.hooks, i)
				if d := push(i, lvInterp, nil, c == '%'); d != nil {
					return d
				}
				i += 2
				continue
			}
			i++
			continue
		case lvHeredoc:
			for c != '$' && c != '%' && c != '\n' && c < utf8.RuneSelf {
				i++
				if i == len(src) {
					break
				}
				c = src[i]
			}
			if i == len(src) || c >= utf8.RuneSelf {
				continue
			}
			switch {
			case c == '\n':
				tokens++
				i++
				if end, ok := heredocEnd(src, i, top.marker); ok {
					pop(i)
					i = end
				}
				continue
			case (c == '$' || c == '%') && i+2 < len(src) && src[i+1] == c && src[i+2] == '{':
				i += 3
				continue
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				tokens += 2
				b.hooks = append(b.hooks, i)
				if d := push(i, lvInterp, nil, c == '%'); d != nil {
					return d
				}
				i += 2
				continue
			}
			i++
			continue
		}
		// Expression or body.
		if isWordByte(c) {
			start := i
			for i++; i < len(src) && isWordByte(src[i]); i++ {
			}
			if !inWord {
				inWord = true
				tokens++
				// Every for expression and template for directive starts
				// with this keyword outside strings.
				if i-start == 3 && string(src[start:i]) == "for" {
					b.hooks = append(b.hooks, start)
				}
			}
			continue
		}
		inWord = false
		switch c {
		case ' ', '\t', '\r':
			for i+1 < len(src) && (src[i+1] == ' ' || src[i+1] == '\t') {
				i++
			}
		case '\n':
			tokens++
			if top.kind == lvBody {
				endItem()
			}
		case '#':
			end, bad := lineEnd(src, i)
			if bad >= 0 {
				return fail(bad, summaryEncoding, detailEncoding)
			}
			i = end
			tokens++
			continue
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				end, bad := lineEnd(src, i)
				if bad >= 0 {
					return fail(bad, summaryEncoding, detailEncoding)
				}
				i = end
				tokens++
				continue
			}
			if i+1 < len(src) && src[i+1] == '*' {
				end := bytes.Index(src[i+2:], []byte("*/"))
				if end < 0 {
					end = len(src)
				} else {
					end += i + 4
				}
				if !utf8.Valid(src[i:end]) {
					return fail(i+firstInvalidUTF8(src[i:end]), summaryEncoding, detailEncoding)
				}
				i = end
				tokens++
				continue
			}
			tokens++
			if d := op(i); d != nil {
				return d
			}
		case '"':
			tokens += 2
			if d := push(i, lvString, nil, false); d != nil {
				return d
			}
		case '(':
			tokens++
			if d := push(i, lvParen, nil, true); d != nil {
				return d
			}
		case '[':
			tokens++
			if d := push(i, lvBracket, nil, true); d != nil {
				return d
			}
		case '{':
			tokens++
			if topBlocks && len(stack) == 1 {
				b.blocks--
				if b.blocks < 0 {
					return fail(i, "Too many blocks", fmt.Sprintf("The configuration has more than %d top-level blocks (config.MaxBlocks) in all its files; use for_each or count to repeat a block.", MaxBlocks))
				}
			}
			kind := lvBody
			if startsFor(src, i+1) {
				kind = lvBracket
			}
			if d := push(i, kind, nil, true); d != nil {
				return d
			}
		case ')', ']', '}':
			tokens++
			if d := pop(i); d != nil {
				return d
			}
		case ',':
			tokens++
			endItem()
		case '<':
			if marker, end, ok := heredocStart(src, i); ok {
				tokens += 2
				if d := push(i, lvHeredoc, marker, false); d != nil {
					return d
				}
				i = end
				continue
			}
			tokens++
			if d := op(i); d != nil {
				return d
			}
		case '=':
			// Only == is an operator; = and => separate a name from a value.
			tokens++
			if i+1 < len(src) && src[i+1] == '=' {
				b.hooks = append(b.hooks, i)
				if d := op(i); d != nil {
					return d
				}
				i++
			}
		case '!', '?':
			tokens++
			if c == '?' || i+1 < len(src) && src[i+1] == '=' {
				b.hooks = append(b.hooks, i)
			}
			if d := op(i); d != nil {
				return d
			}
		case '+', '-', '*', '%', '>', '&', '|':
			tokens++
			if d := op(i); d != nil {
				return d
			}
		default:
			tokens++
		}
		i++
	}
	if tokens > b.tokens {
		return fail(len(src), "Configuration too large", fmt.Sprintf("The configuration has more than %d tokens (config.MaxTokens) in all its files; gpuform stops reading here.", MaxTokens))
	}
	b.tokens -= tokens
	return nil
}

// isWordByte reports whether c continues an identifier or a number.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// lineEnd returns the offset of the newline that ends the line holding i
// (or len(src)), and the offset of the first invalid UTF-8 sequence before
// it, or -1.
func lineEnd(src []byte, i int) (int, int) {
	end := bytes.IndexByte(src[i:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += i
	}
	if utf8.Valid(src[i:end]) {
		return end, -1
	}
	return end, i + firstInvalidUTF8(src[i:end])
}

// firstInvalidUTF8 returns the offset of the first invalid UTF-8 sequence
// in b, or -1.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// startsFor reports whether the object braces opened just before i hold a
// for expression (whose newlines do not separate items).
func startsFor(src []byte, i int) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	if i+3 >= len(src) || string(src[i:i+3]) != "for" {
		return false
	}
	i += 3
	if i < len(src) && src[i] != ' ' && src[i] != '\t' {
		return false
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z')
}

// heredocStart recognises "<<MARKER\n" or "<<-MARKER\n" at i, returning the
// marker and the offset after the newline.
func heredocStart(src []byte, i int) ([]byte, int, bool) {
	j := i + 2
	if j > len(src) || src[i+1] != '<' {
		return nil, 0, false
	}
	if j < len(src) && src[j] == '-' {
		j++
	}
	start := j
	for j < len(src) && (isWordByte(src[j]) || src[j] == '-') {
		j++
	}
	if j == start {
		return nil, 0, false
	}
	marker := src[start:j]
	if j < len(src) && src[j] == '\r' {
		j++
	}
	if j >= len(src) || src[j] != '\n' {
		return nil, 0, false
	}
	return marker, j + 1, true
}

// heredocEnd reports whether the line at i closes a heredoc with marker,
// and where the line's text ends (its newline stays for the caller).
func heredocEnd(src []byte, i int, marker []byte) (int, bool) {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i+len(marker) > len(src) || string(src[i:i+len(marker)]) != string(marker) {
		return 0, false
	}
	j := i + len(marker)
	if j < len(src) && src[j] == '\r' {
		j++
	}
	if j < len(src) && src[j] != '\n' {
		return 0, false
	}
	return j, true
}

// posAt returns the position of byte offset off in src, with the column in
// characters as HCL counts them for ASCII and most text.
func posAt(src []byte, off int) hcl.Pos {
	line, lineStart := 1, 0
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	col := 1
	for i := lineStart; i < off && i < len(src); {
		_, size := utf8.DecodeRune(src[i:])
		i += size
		col++
	}
	return hcl.Pos{Line: line, Column: col, Byte: off}
}

// sourceNav is the navigation of a file refused before parsing (see
// loader.checkSource), so that its diagnostic still names the enclosing
// block: found from the text, as the last line at or before the offset that
// starts a top-level block ("tenant "research" {" at column 1), unless a
// line holding only "}" closed it. It runs only when rendering such a
// diagnostic.
type sourceNav struct{ src []byte }

// SourceNav returns the navigation of a file CheckSource refused, which
// names the block enclosing a diagnostic from the file's text.
func SourceNav(src []byte) any { return sourceNav{src} }

// ContextString implements hcled.ContextString.
func (n sourceNav) ContextString(offset int) string {
	offset = min(max(offset, 0), len(n.src))
	lineStart := bytes.LastIndexByte(n.src[:offset], '\n') + 1
	for {
		lineEnd := bytes.IndexByte(n.src[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(n.src)
		} else {
			lineEnd += lineStart
		}
		line := bytes.TrimRight(n.src[lineStart:lineEnd], " \t\r")
		switch {
		case lineEnd < offset && len(line) == 1 && line[0] == '}':
			return ""
		case len(line) > 1 && line[len(line)-1] == '{' && (line[0] == '_' || line[0] >= 'a' && line[0] <= 'z' || line[0] >= 'A' && line[0] <= 'Z'):
			return string(bytes.TrimSpace(line[:len(line)-1]))
		case lineStart == 0:
			return ""
		}
		lineStart = bytes.LastIndexByte(n.src[:lineStart-1], '\n') + 1
	}
}
