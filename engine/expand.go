package engine

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine/kinds"
)

// ExpandLimit is the most leaf lines ExpandValue gives one value; the
// rest are counted, not listed.
const ExpandLimit = 200

// ExpandInline is the longest one-line form (FormatValue) of a value that
// still prints on one line when it holds a list of maps: the length past
// which a string prints as a heredoc.
const ExpandInline = 120

// Leaf is one leaf field of an expanded value: its path, FormatPath's
// spelling, and its value (a scalar, a list of scalars, or an empty list
// or map).
type Leaf struct {
	Path  string
	Value any
}

// Expandable reports whether v prints as leaves (ExpandValue) rather than
// as one line: it holds a list of maps, at any depth, and its one-line
// form is longer than ExpandInline.
func Expandable(v any) bool {
	return holdsListOfMaps(v) && len(FormatValue(v)) > ExpandInline
}

// holdsListOfMaps reports whether v is, or holds, a list with a map in it.
func holdsListOfMaps(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if holdsListOfMaps(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if _, ok := e.(map[string]any); ok || holdsListOfMaps(e) {
				return true
			}
		}
	}
	return false
}

// ExpandValue lists the leaves of v, the value of the field at path (as
// FormatPath prints it) in an object of kind gvk, in order: map keys
// sorted, list elements in the list's order, each named by its keys where
// the kind's schema gives the list keys (flavors[a100]), else by its index
// ([0]). A list of scalars is one leaf. It gives at most limit leaves
// (all when limit <= 0) and the number of leaves left out.
func ExpandValue(gvk schema.GroupVersionKind, path string, v any, limit int) ([]Leaf, int) {
	if v == nil {
		return nil, 0
	}
	e := expander{lk: &listKeys{gvk: gvk}, limit: limit}
	e.walk(parsePath(gvk, path), []string{listElement + path}, v)
	return e.out, e.more
}

// expander is the state of one ExpandValue.
type expander struct {
	lk    *listKeys
	limit int
	out   []Leaf
	more  int
}

// walk adds the leaves of v: segs is its path as DiffFields paths are
// (for the list keys' lookup), disp as it prints.
func (e *expander) walk(segs, disp []string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			keys := slices.Sorted(maps.Keys(x))
			for _, k := range keys {
				e.walk(append(segs[:len(segs):len(segs)], k), append(disp[:len(disp):len(disp)], k), x[k])
			}
			return
		}
	case []any:
		if hasMaps(x) {
			labels := e.lk.keyed(segs, x)
			for i, el := range x {
				label := "[" + strconv.Itoa(i) + "]"
				if labels != nil {
					label = labels[i]
				}
				e.walk(append(segs[:len(segs):len(segs)], "["+strconv.Itoa(i)+"]"), append(disp[:len(disp):len(disp)], label), el)
			}
			return
		}
	}
	if e.limit > 0 && len(e.out) >= e.limit {
		e.more++
		return
	}
	e.out = append(e.out, Leaf{Path: FormatPath(disp), Value: v})
}

// parsePath turns a path as FormatPath prints it back into path elements
// as DiffFields has them, enough for schemaPath: field names, map keys,
// and "[0]" for each list element (by index or by keys). A quoted key in
// brackets is a list element when the path before it is a list with keys
// in gvk's schema, else a map key.
func parsePath(gvk schema.GroupVersionKind, path string) []string {
	var segs []string
	for s := path; s != ""; {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			if q, err := strconv.QuotedPrefix(s[1:]); err == nil && strings.HasPrefix(s[1+len(q):], "]") {
				if key, err := strconv.Unquote(q); err == nil && len(listMapKeysAt(gvk, segs)) == 0 {
					segs = append(segs, key)
					s = s[len(q)+2:]
					continue
				}
			}
			segs = append(segs, "[0]")
			s = s[closingBracket(s)+1:]
		default:
			n := strings.IndexAny(s, ".[")
			if n < 0 {
				n = len(s)
			}
			segs = append(segs, s[:n])
			s = s[n:]
		}
	}
	return segs
}

// closingBracket returns the index of the "]" that closes the "[" that s
// starts with, skipping quoted strings; len(s)-1 when there is none.
func closingBracket(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ']':
			return i
		case '"':
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return len(s) - 1
			}
			i += len(q) - 1
		}
	}
	return len(s) - 1
}

// listMapKeysAt is kinds.ListMapKeys for a path given as path elements.
func listMapKeysAt(gvk schema.GroupVersionKind, segs []string) []string {
	if len(segs) == 0 {
		return nil
	}
	return kinds.ListMapKeys(gvk, schemaPath(segs))
}
