package compile

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpuform/gpuform/engine"
)

// maxSharedLeaf bounds the maps shareLeaves shares: a small map's storage
// is one group of eight slots.
const maxSharedLeaf = 8

// shareLeaves makes the desired objects share one copy of each small map
// of scalars that recurs among them (a model's resources, its node
// selector and model format, a label set): at size L the same few such
// maps recur in tens of thousands of objects, and each map costs some 300
// bytes however few its entries. Nothing writes into a compiled object's
// maps (a commit stamp replaces the annotations map whole), so sharing is
// safe once every backend has added what it adds.
func shareLeaves(objs []*engine.Object) {
	seen := map[string]map[string]any{}
	for _, o := range objs {
		shareIn(o.Object.Object, seen)
	}
}

// shareIn replaces, below m, every small map of scalars by the copy in
// seen with the same content, recording those seen first.
func shareIn(m map[string]any, seen map[string]map[string]any) {
	for k, v := range m {
		switch v.(type) {
		case map[string]any, []any:
			m[k] = share(v, seen)
		}
	}
}

// share returns v, or the copy in seen when v is a small map of scalars
// recorded there, sharing within v first.
func share(v any, seen map[string]map[string]any) any {
	switch v := v.(type) {
	case map[string]any:
		if key, ok := leafKey(v); ok {
			if c, found := seen[key]; found {
				return c
			}
			seen[key] = v
			return v
		}
		shareIn(v, seen)
	case []any:
		for i, e := range v {
			v[i] = share(e, seen)
		}
	}
	return v
}

// leafKey is the content of a small map of scalars as a string that tells
// the values' types apart; ok is false for any other map.
func leafKey(m map[string]any) (string, bool) {
	if len(m) == 0 || len(m) > maxSharedLeaf {
		return "", false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		switch v := m[k].(type) {
		case string:
			b.WriteString("\x00s")
			b.WriteString(v)
		case int:
			b.WriteString("\x00i")
			b.WriteString(strconv.Itoa(v))
		case int64:
			b.WriteString("\x00I")
			b.WriteString(strconv.FormatInt(v, 10))
		case bool:
			b.WriteString("\x00b")
			b.WriteString(strconv.FormatBool(v))
		default: // floats, nil, nested values: not shared
			return "", false
		}
		b.WriteByte(1)
	}
	return b.String(), true
}
