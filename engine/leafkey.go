package engine

import (
	"slices"
	"strconv"
)

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
	var keys [MaxSharedLeaf]string
	ks := keys[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		b = append(b, k...)
		switch v := m[k].(type) {
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
		default: // floats and nested values: not shared
			return b, false
		}
		b = append(b, 1)
	}
	return b, true
}
