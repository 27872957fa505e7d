package render

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/gpuform/gpuform/engine"
)

// diffLine is one line of a line diff; Op is "" for unchanged lines.
type diffLine struct {
	Op   engine.FieldOp
	Text string
}

// lineDiff compares two multi-line strings line by line (sergi/go-diff).
func lineDiff(before, after string) []diffLine {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(before, after)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var out []diffLine
	for _, d := range diffs {
		op := engine.FieldOp("")
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = engine.FieldAdd
		case diffmatchpatch.DiffDelete:
			op = engine.FieldRemove
		}
		for _, line := range strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n") {
			out = append(out, diffLine{Op: op, Text: line})
		}
	}
	return out
}

// isLong reports whether a string value shows as a heredoc: more than one
// line, or over 120 bytes.
func isLong(s string) bool {
	return strings.Contains(strings.TrimSuffix(s, "\n"), "\n") || len(s) > 120
}
