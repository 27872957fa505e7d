package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcled"

	"github.com/gpuform/gpuform/internal/textsafe"
)

// CleanDiagnostics returns diags in source order with duplicates removed
// (one bad expression in a for_each block reports once, not per instance).
func CleanDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		sev             hcl.DiagnosticSeverity
		summary, detail string
		rng             hcl.Range
	}
	seen := map[key]bool{}
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		k := key{sev: d.Severity, summary: d.Summary, detail: d.Detail}
		if d.Subject != nil {
			k.rng = *d.Subject
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Subject, out[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return out
}

// DiagnosticWriter renders diagnostics the way Terraform does: severity and
// summary, the file and line with the enclosing block, the source line with
// the range underlined, then the detail.
type DiagnosticWriter struct {
	// Files are the parsed files that snippets are taken from.
	Files map[string]*hcl.File
	// Color adds ANSI colours.
	Color bool
	// Width wraps detail text at this many columns; 0 means no wrapping.
	Width int
}

// Write renders every diagnostic in diags to w.
func (dw *DiagnosticWriter) Write(w io.Writer, diags hcl.Diagnostics) error {
	bw := bufio.NewWriter(w)
	for _, d := range diags {
		dw.writeOne(bw, d)
	}
	return bw.Flush()
}

func (dw *DiagnosticWriter) paint(code string, s any) textsafe.Styled {
	return textsafe.Style(dw.Color, code, s)
}

// writeOne writes one diagnostic. Everything it prints besides its own words
// and colours (the summary, the detail, the file name, the block header and
// the source line) is escaped: a configuration, a value or an API server's
// message may hold terminal control sequences.
func (dw *DiagnosticWriter) writeOne(w *bufio.Writer, d *hcl.Diagnostic) {
	switch d.Severity {
	case hcl.DiagWarning:
		textsafe.Fprintf(w, "%s %s\n", dw.paint("1;33", "Warning:"), dw.paint("1", d.Summary))
	default:
		textsafe.Fprintf(w, "%s %s\n", dw.paint("1;31", "Error:"), dw.paint("1", d.Summary))
	}
	if d.Subject != nil {
		s := *d.Subject
		textsafe.Fprintln(w)
		file := dw.Files[s.Filename]
		in := ""
		if file != nil {
			if c := hcled.ContextString(file, s.Start.Byte); c != "" {
				in = ", in " + c
			}
		}
		textsafe.Fprintf(w, "  on %s line %d%s:\n", s.Filename, s.Start.Line, in)
		if file != nil {
			if line, col0, ok := sourceLine(file.Bytes, s); ok {
				runes := []rune(line)
				endCol := len(runes)
				if s.End.Line == s.Start.Line {
					endCol = col0 + max(1, s.End.Column-s.Start.Column)
				}
				// The carets are under the escaped text of the range.
				before := textsafe.Escape(string(runes[:col0]))
				inLine := string(runes[col0:min(len(runes), max(col0, endCol))])
				n := max(1, endCol-col0) + utf8.RuneCountInString(textsafe.Escape(inLine)) - utf8.RuneCountInString(inLine)
				prefix := fmt.Sprintf("%4d: ", s.Start.Line)
				textsafe.Fprintf(w, "%s%s\n", prefix, line)
				textsafe.Fprintf(w, "%s%s%s\n", strings.Repeat(" ", len(prefix)), indentLike(before, utf8.RuneCountInString(before)), dw.paint("1", strings.Repeat("^", n)))
			}
		}
	}
	if d.Detail != "" {
		textsafe.Fprintln(w)
		textsafe.Fprintln(w, wrap(d.Detail, dw.Width))
	}
	textsafe.Fprintln(w)
}

// sourceLine returns the text of the range's first line, with invalid UTF-8
// replaced, and the 0-based rune column where the range starts.
func sourceLine(src []byte, r hcl.Range) (string, int, bool) {
	if r.Start.Byte < 0 || r.Start.Byte > len(src) {
		return "", 0, false
	}
	start := bytes.LastIndexByte(src[:r.Start.Byte], '\n') + 1
	end := bytes.IndexByte(src[r.Start.Byte:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += r.Start.Byte
	}
	line := strings.ToValidUTF8(strings.TrimRight(string(src[start:end]), "\r"), "\uFFFD")
	col0 := utf8.RuneCount(src[start:r.Start.Byte])
	const maxLine = 200
	if utf8.RuneCountInString(line) > maxLine {
		runes := []rune(line)
		line = string(runes[:maxLine]) + "…"
		col0 = min(col0, maxLine)
	}
	return line, col0, true
}

// indentLike returns whitespace as wide as the first col runes of line,
// keeping tabs so the caret lines up.
func indentLike(line string, col int) string {
	var b strings.Builder
	i := 0
	for _, r := range line {
		if i >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		i++
	}
	for ; i < col; i++ {
		b.WriteByte(' ')
	}
	return b.String()
}

// wrap folds text at width columns, keeping existing line breaks and
// leaving indented lines alone.
func wrap(text string, width int) string {
	if width <= 0 {
		return text
	}
	var out []string
	for _, para := range strings.Split(text, "\n") {
		if strings.HasPrefix(para, " ") || len(para) <= width {
			out = append(out, para)
			continue
		}
		line := ""
		for _, word := range strings.Fields(para) {
			if line != "" && len(line)+1+len(word) > width {
				out = append(out, line)
				line = word
				continue
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// JSONDiagnostics is the --json form of a validation result.
type JSONDiagnostics struct {
	// FormatVersion is the version of this format.
	FormatVersion string `json:"format_version"`
	// Valid is true when there is no error.
	Valid bool `json:"valid"`
	// ErrorCount and WarningCount count the diagnostics by severity.
	ErrorCount   int `json:"error_count"`
	WarningCount int `json:"warning_count"`
	// Diagnostics are the diagnostics in the order they were found.
	Diagnostics []JSONDiagnostic `json:"diagnostics"`
}

// JSONDiagnostic is one diagnostic in --json output.
type JSONDiagnostic struct {
	// Severity is "error" or "warning".
	Severity string `json:"severity"`
	// Summary is the one-line description; Detail says more.
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"`
	// Range is the source the diagnostic is about; nil when none.
	Range *JSONRange `json:"range,omitempty"`
}

// JSONRange is a source range in --json output.
type JSONRange struct {
	// Filename is the file's name.
	Filename string `json:"filename"`
	// Start and End delimit the range, End exclusive.
	Start JSONPos `json:"start"`
	End   JSONPos `json:"end"`
}

// JSONPos is a position in a source file: 1-based line and column, 0-based byte.
type JSONPos struct {
	// Line is the 1-based line.
	Line int `json:"line"`
	// Column is the 1-based column, in characters.
	Column int `json:"column"`
	// Byte is the 0-based byte offset in the file.
	Byte int `json:"byte"`
}

// NewJSONDiagnostics converts diags to their --json form.
func NewJSONDiagnostics(diags hcl.Diagnostics) JSONDiagnostics {
	out := JSONDiagnostics{FormatVersion: "1.0", Diagnostics: []JSONDiagnostic{}}
	for _, d := range diags {
		jd := JSONDiagnostic{Summary: d.Summary, Detail: d.Detail, Severity: "error"}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
			out.WarningCount++
		} else {
			out.ErrorCount++
		}
		if s := d.Subject; s != nil {
			jd.Range = &JSONRange{
				Filename: s.Filename,
				Start:    JSONPos{Line: s.Start.Line, Column: s.Start.Column, Byte: s.Start.Byte},
				End:      JSONPos{Line: s.End.Line, Column: s.End.Column, Byte: s.End.Byte},
			}
		}
		out.Diagnostics = append(out.Diagnostics, jd)
	}
	out.Valid = out.ErrorCount == 0
	return out
}

// WriteJSON writes diags as indented JSON.
func WriteJSON(w io.Writer, diags hcl.Diagnostics) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewJSONDiagnostics(diags))
}
