package compile

import (
	"reflect"

	"github.com/gpuform/gpuform/engine"
)

// shareLeaves makes the desired objects share one copy of each small map
// of scalars that recurs among them (a model's resources, its node
// selector and model format, a label set): at size L the same few such
// maps recur in tens of thousands of objects, and each map costs some 300
// bytes however few its entries. Nothing writes into a compiled object's
// maps (a commit stamp replaces the annotations map whole), so sharing is
// safe once every backend has added what it adds.
func shareLeaves(objs []*engine.Object) {
	s := &sharer{seen: map[string]map[string]any{}}
	for _, o := range objs {
		s.in(o.Object.Object)
	}
}

// sharer remembers the small maps of scalars seen, by content.
type sharer struct {
	seen map[string]map[string]any
	// key is a reused buffer for the content of one map.
	key []byte
}

// in replaces, below m, every small map of scalars by the copy seen first
// with the same content.
func (s *sharer) in(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			if c := s.share(v); c != nil {
				m[k] = c
			}
		case []any:
			for i, e := range v {
				if em, ok := e.(map[string]any); ok {
					if c := s.share(em); c != nil {
						v[i] = c
					}
				}
			}
		}
	}
}

// share returns the copy seen of m when m is a small map of scalars seen
// before, and nil otherwise (having recorded m, or shared within it).
func (s *sharer) share(m map[string]any) map[string]any {
	var ok bool
	if s.key, ok = engine.AppendLeafKey(s.key[:0], m); !ok {
		s.in(m)
		return nil
	}
	if c, ok := s.seen[string(s.key)]; ok {
		if reflect.ValueOf(c).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
			return nil
		}
		return c
	}
	s.seen[string(s.key)] = m
	return nil
}
