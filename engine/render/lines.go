package render

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/gpuform/gpuform/engine"
)

// DiffLine is one line of a line diff; Op is "" for unchanged lines.
type DiffLine struct {
	Op   engine.FieldOp
	Text string
}

// LineDiff compares two multi-line strings line by line (sergi/go-diff).
func LineDiff(before, after string) []DiffLine {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(before, after)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var out []DiffLine
	for _, d := range diffs {
		op := engine.FieldOp("")
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = engine.FieldAdd
		case diffmatchpatch.DiffDelete:
			op = engine.FieldRemove
		}
		for _, line := range strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n") {
			out = append(out, DiffLine{Op: op, Text: line})
		}
	}
	return out
}

func isLong(s string) bool {
	return strings.Contains(strings.TrimSuffix(s, "\n"), "\n") || len(s) > 120
}
