package engine

import "strconv"

// MaxSharedLeaf bounds the maps whose content AppendLeafKey writes: a small
// map's storage is one group of eight slots.
const MaxSharedLeaf = 8

// AppendLeafKey appends to b the content of m, a small map (at most
// MaxSharedLeaf entries) whose values are all scalars (strings, integers,
// booleans, nil), telling the values' types apart, so that two such maps
// with the same key hold the same content. It reports false, with b's
// content unspecified, for any other map (empty, larger, or holding floats
// or nested values). Both the compiled objects and the objects refreshed
// from a cluster share one copy of each such map that recurs among them.
func AppendLeafKey(b []byte, m map[string]any) ([]byte, bool) {
	if len(m) == 0 || len(m) > MaxSharedLeaf {
		return b, false
	}
	var l LeafEntries
	for k, v := range m {
		if !l.Add(k, v) {
			return b, false
		}
	}
	return l.AppendKey(b), true
}

// LeafEntries gathers the entries of a small map of scalars, in any order, to
// write the key AppendLeafKey writes for the map without reading the map
// twice: one pass over a map can both gather its scalars and visit its
// nested values. The zero LeafEntries is empty.
type LeafEntries struct {
	n    int
	keys [MaxSharedLeaf]string
	vals [MaxSharedLeaf]any
}

// Add adds the entry k: v. It reports false, adding nothing, when v is no
// scalar AppendLeafKey accepts or the leaf holds MaxSharedLeaf entries.
func (l *LeafEntries) Add(k string, v any) bool {
	switch v.(type) {
	case string, int, int64, bool, nil:
	default: // floats and nested values: not shared
		return false
	}
	if l.n == MaxSharedLeaf {
		return false
	}
	l.keys[l.n], l.vals[l.n] = k, v
	l.n++
	return true
}

// AppendKey appends to b the key of the entries added, the one
// AppendLeafKey appends for a map of these entries.
func (l *LeafEntries) AppendKey(b []byte) []byte {
	// Insertion sort by key: at most eight entries, most of them few.
	for i := 1; i < l.n; i++ {
		for j := i; j > 0 && l.keys[j] < l.keys[j-1]; j-- {
			l.keys[j], l.keys[j-1] = l.keys[j-1], l.keys[j]
			l.vals[j], l.vals[j-1] = l.vals[j-1], l.vals[j]
		}
	}
	for i := range l.n {
		b = append(b, l.keys[i]...)
		switch v := l.vals[i].(type) {
		case string:
			b = append(b, 0, 's')
			b = append(b, v...)
		case int:
			b = append(b, 0, 'i')
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = append(b, 0, 'I')
			b = strconv.AppendInt(b, v, 10)
		case bool:
			b = append(b, 0, 'b')
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, 0, 'n')
		}
		b = append(b, 1)
	}
	return b
}
