package compile

import (
	"reflect"

	"github.com/gpuform/gpuform/engine"
)

// sharer makes the desired objects share one copy of each small map of
// scalars that recurs among them (a model's resources, its node selector
// and model format, a label set): in a large stack the same few such maps
// recur in tens of thousands of objects, and each map costs some hundreds
// of bytes however few its entries. It remembers the maps seen, by content.
// Compile passes it each object as the object is added, when every
// backend is done with it: an object of a Desired is final (engine.Object).
type sharer struct {
	seen map[string]map[string]any
	// key is a reused buffer for the content of one map.
	key []byte
}

// newSharer returns a sharer that has seen no map.
func newSharer() *sharer { return &sharer{seen: map[string]map[string]any{}} }

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
			s.inList(v)
		}
	}
}

// inList replaces every small map of scalars that is an element of l by
// the copy seen first with the same content, and shares within the
// other maps of l.
func (s *sharer) inList(l []any) {
	for i, e := range l {
		if em, ok := e.(map[string]any); ok {
			if c := s.share(em); c != nil {
				l[i] = c
			}
		}
	}
}

// share returns the copy seen of m when m is a small map of scalars seen
// before, and nil otherwise (having recorded m, or shared within it). It
// reads m once, gathering its scalars and sharing within its nested
// values as it goes, where reading it for its key first and then again
// for its nested values read every map that is no leaf twice.
func (s *sharer) share(m map[string]any) map[string]any {
	leaf := len(m) > 0 && len(m) <= engine.MaxSharedLeaf
	var l engine.LeafEntries
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			leaf = false
			if c := s.share(v); c != nil {
				m[k] = c
			}
		case []any:
			leaf = false
			s.inList(v)
		default:
			leaf = leaf && l.Add(k, v)
		}
	}
	if !leaf {
		return nil
	}
	s.key = l.AppendKey(s.key[:0])
	if c, ok := s.seen[string(s.key)]; ok {
		if reflect.ValueOf(c).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
			return nil
		}
		return c
	}
	s.seen[string(s.key)] = m
	return nil
}

// containerResources is a container's resources: limits and requests,
// each count of resource.
func containerResources(resource, count string) map[string]any {
	return map[string]any{"limits": pairs(resource, count), "requests": pairs(resource, count)}
}

// pairs is the map of pairs kv: key, value, key, value...
func pairs(kv ...string) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
