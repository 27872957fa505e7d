package kubernetes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// settleMetadata reads the metadata of an item being settled
// (settleStream), an object at the cursor, as ownMetadata does, but for
// its labels and annotations: once the rest is read, desired is given the
// metadata map and returns the metadata of the desired object the item
// settles against (nil: none), and where the item's labels or annotations
// hold the same strings as that object's, the item keeps the desired
// object's map instead of building its own, as the settled copy would
// (engine.Settler). At size L that is 47,516 annotations maps, each with
// the object's own address, and as many label sets, not built in the
// refresh only to be dropped.
func (s *scanner) settleMetadata(d *decoder, desired func(md map[string]any) map[string]any) {
	md := map[string]any{}
	var labels, annotations []byte
	s.fields(d, func(key string) {
		switch {
		case key == "labels" && s.peek() == '{':
			labels = s.rawValue()
		case key == "annotations" && s.peek() == '{':
			annotations = s.rawValue()
		case key == "managedFields" && s.peek() == '[':
			md[key] = s.ownManagedFields(d, &d.managed)
		case unreadMetadata(key):
			s.skip()
		default:
			md[key] = s.value(d)
		}
	})
	if s.err != nil {
		desired(md)
		return
	}
	wmd := desired(md)
	for _, f := range [...]struct {
		name string
		raw  []byte
	}{{"labels", labels}, {"annotations", annotations}} {
		if f.raw == nil {
			continue
		}
		if w, ok := wmd[f.name].(map[string]any); ok && sameStrings(f.raw, w) {
			md[f.name] = w
			continue
		}
		sub := scanner{b: f.raw, depth: s.depth, inPlace: s.inPlace}
		md[f.name] = sub.value(d)
		if sub.err != nil {
			s.fail(f.name + ": " + sub.err.Error())
		}
	}
}

// maxSameStrings bounds the entries sameStrings compares; an object with
// more is decoded.
const maxSameStrings = 16

// sameStrings reports whether b, a JSON object, holds exactly want's
// entries, each value a string, every key and value without escapes (an
// object with escapes, or more than maxSameStrings entries, is not
// compared: false). It reads b in place, building nothing.
func sameStrings(b []byte, want map[string]any) bool {
	if len(want) > maxSameStrings {
		return false
	}
	var keys [maxSameStrings][]byte
	n := 0
	s := scanner{b: b}
	if s.peek() != '{' {
		return false
	}
	for ok := s.first('}'); ok; ok = s.more('}') {
		if s.peek() != '"' || n == len(want) {
			return false
		}
		k, plain := s.str()
		if !plain || !s.expect(':', "':' after a field name") || s.peek() != '"' {
			return false
		}
		v, plain := s.str()
		w, found := want[string(k)].(string)
		if !plain || !found || w != string(v) {
			return false
		}
		for _, seen := range keys[:n] {
			if string(seen) == string(k) {
				return false
			}
		}
		keys[n] = k
		n++
	}
	return s.err == nil && n == len(want)
}

// scratchManaged is a managedFields list that ownManagedFields reads one
// item's into and the next item's over (see ownManagedFields). At size L
// a refresh settles 47,516 items, each list a slice, an entry map and a
// FieldsV1 that no settled copy keeps: 18 MB allocated for nothing. A nil
// *scratchManaged allocates each anew.
type scratchManaged struct {
	kept    []any
	entries []map[string]any
	fields  []*metav1.FieldsV1
}

// list returns an empty list to read into.
func (m *scratchManaged) list() []any {
	if m == nil || m.kept == nil {
		return make([]any, 0, 1)
	}
	return m.kept[:0]
}

// keep records the list read, for the next item to reuse.
func (m *scratchManaged) keep(l []any) {
	if m != nil {
		m.kept = l
	}
}

// entry returns an empty map for the i-th entry kept.
func (m *scratchManaged) entry(i int) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	if i == len(m.entries) {
		m.entries = append(m.entries, make(map[string]any, 4))
	}
	e := m.entries[i]
	clear(e)
	return e
}

// fieldsV1 returns the fieldsV1 of the i-th entry kept, holding raw.
func (m *scratchManaged) fieldsV1(i int, raw []byte) *metav1.FieldsV1 {
	if m == nil {
		return &metav1.FieldsV1{Raw: raw}
	}
	if i == len(m.fields) {
		m.fields = append(m.fields, &metav1.FieldsV1{})
	}
	m.fields[i].Raw = raw
	return m.fields[i]
}
