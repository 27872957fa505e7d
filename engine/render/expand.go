package render

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// expanded writes field f of an object of kind gvk as one line per leaf
// (engine.ExpandValue) when its value holds a list of maps and is too
// long for one line (engine.Expandable), and reports whether it did. At
// most engine.ExpandLimit lines per field; a last line counts the rest.
// Callers never pass a sensitive object's field: its leaves' paths may
// name list elements by their values.
func (r *textRenderer) expanded(f engine.FieldDiff, gvk schema.GroupVersionKind) bool {
	switch f.Op {
	case engine.FieldAdd, engine.FieldRemove:
		v, tail := f.After, ""
		if f.Op == engine.FieldRemove {
			v, tail = f.Before, " -> null"
		}
		if !engine.Expandable(v) {
			return false
		}
		leaves, more := engine.ExpandValue(gvk, f.Path, v, engine.ExpandLimit)
		for _, l := range leaves {
			textsafe.Fprintf(r.w, "      %s %s = %s%s\n", r.symbol(string(f.Op)), l.Path, engine.FormatValue(l.Value), tail)
		}
		r.moreLeaves(more, f.Path)
		return true
	}
	if !engine.Expandable(f.Before) && !engine.Expandable(f.After) || !sameShape(f.Before, f.After) {
		return false
	}
	r.leafChanges(f, gvk)
	return true
}

// leafChanges writes the leaves of a changed field that differ: changed
// and added leaves in the order of the new value, then removed ones in
// the order of the old.
func (r *textRenderer) leafChanges(f engine.FieldDiff, gvk schema.GroupVersionKind) {
	before, _ := engine.ExpandValue(gvk, f.Path, f.Before, 0)
	after, _ := engine.ExpandValue(gvk, f.Path, f.After, 0)
	old := make(map[string]string, len(before))
	for _, l := range before {
		old[l.Path] = engine.FormatValue(l.Value)
	}
	lines, more := 0, 0
	write := func(op, path, text string) {
		if lines >= engine.ExpandLimit {
			more++
			return
		}
		lines++
		textsafe.Fprintf(r.w, "      %s %s = %s\n", r.symbol(op), path, text)
	}
	seen := make(map[string]bool, len(after))
	for _, l := range after {
		seen[l.Path] = true
		v := engine.FormatValue(l.Value)
		b, had := old[l.Path]
		switch {
		case !had:
			write("+", l.Path, v)
		case b != v:
			write("~", l.Path, b+" -> "+v)
		}
	}
	for _, l := range before {
		if !seen[l.Path] {
			write("-", l.Path, old[l.Path]+" -> null")
		}
	}
	r.moreLeaves(more, f.Path)
}

// moreLeaves writes the line that counts the leaves of the field at path
// left out, if any.
func (r *textRenderer) moreLeaves(n int, path string) {
	if n > 0 {
		textsafe.Fprintf(r.w, "      ... %s of %s not shown (the JSON output has them all)\n", capacity.Count(n, "more field"), path)
	}
}

// sameShape reports whether a and b are both lists, both maps, or one of
// them is null: the values whose leaves compare.
func sameShape(a, b any) bool {
	if a == nil || b == nil {
		return true
	}
	_, al := a.([]any)
	_, bl := b.([]any)
	_, am := a.(map[string]any)
	_, bm := b.(map[string]any)
	return al && bl || am && bm
}
