package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FieldReader reads the JSON of a live object as a refresh streams it, for
// a StreamSettle: the value at its cursor is read once, by Object (and
// then Next), Skip or Value, which move the cursor past it. A reader that
// meets malformed JSON returns nothing more, and its caller decodes the
// object whole, which reports it.
type FieldReader interface {
	// Object moves into the object at the cursor and reports whether the
	// value was an object; any other value is skipped.
	Object() bool
	// Next returns the name of the next field of the object Object moved
	// into, with the cursor at the field's value, which must be read
	// before Next is called again; false at the object's end, which
	// moves the cursor past it. The name is valid while the object's JSON
	// is read.
	Next() (string, bool)
	// Skip moves the cursor past the value at it.
	Skip()
	// Value decodes the value at the cursor as unstructured content, as
	// the refresh decodes live objects.
	Value() any
}

// StreamSettle settles one live object as its JSON is read (Settler.Stream):
// its apiVersion, kind and metadata decoded, every other top-level field
// compared with the desired object as it is read (Field), so that an
// unchanged object's spec is never built. It answers only what Settle
// would: an object Done settles, Settle settles to the same slim copy.
// Where it cannot tell without the whole object (a field differs, a
// field gpuform owned is no longer desired), it does not settle, and the
// object is decoded whole and given to Settle.
type StreamSettle struct {
	head    *unstructured.Unstructured
	desired map[string]any
	lk      listKeys
	// seen holds the names of the desired fields found in the live maps
	// being compared, a stretch per map from the root down.
	seen []string
	// path is the reused path of the field being compared.
	path []string
	spec map[string]any
	// keep is set for the kinds whose slim copy keeps a field of the
	// spec (settledSpec).
	keep bool
	// whole is set for the kinds owned whole (kinds.Entry.OwnedWhole):
	// another manager's field is a difference.
	whole bool
	s     *Settler
}

// DesiredMetadata returns the metadata of the desired object at k that a
// live object at k would settle against, nil when there is none: a
// refresh reading a live object's metadata keeps the desired object's
// labels and annotations maps where its own hold the same strings,
// rather than build a copy (as slim would keep them). Nothing may write
// into the maps it returns.
func (s *Settler) DesiredMetadata(k Key) map[string]any {
	o := s.index[k]
	if o == nil {
		return nil
	}
	md, _ := o.Object.Object["metadata"].(map[string]any)
	return md
}

// Stream makes c the StreamSettle of a live object of the stack whose
// apiVersion, kind and metadata are decoded in head (its other fields yet
// to be read), reusing c's buffers, and reports whether the object may
// settle: false when it has no desired object, is not owned, or is in the
// lock's namespace. Done takes head over.
func (s *Settler) Stream(c *StreamSettle, head *unstructured.Unstructured) bool {
	k := KeyOf(head)
	o := s.index[k]
	if o == nil || !s.owns(k, head) {
		return false
	}
	*c = StreamSettle{head: head, desired: o.Object.Object, lk: listKeys{gvk: head.GroupVersionKind()}, s: s,
		keep: settledSpec(k) != "", seen: c.seen[:0], path: c.path[:0],
		whole: s.reg.OwnedWhole(schema.GroupKind{Group: k.Group, Kind: k.Kind})}
	if cap(c.path) < 16 {
		c.path = make([]string, 0, 16)
	}
	return true
}

// Field reads the live object's top-level field name from r and reports
// whether it may still settle: false when the field differs from the
// desired one, or is one Stream had to have decoded before (apiVersion,
// kind, metadata); then the object is to be decoded whole.
func (c *StreamSettle) Field(name string, r FieldReader) bool {
	switch name {
	case "apiVersion", "kind", "metadata":
		return false
	case "status":
		r.Skip() // never compared, never kept
		return true
	}
	w, wanted := c.desired[name]
	if name == "spec" && c.keep {
		// Kept in the slim copy: decoded, and compared as Settle does.
		h := r.Value()
		c.spec, _ = h.(map[string]any)
		if !wanted {
			return true
		}
		c.seen = appendNew(c.seen, name)
		var out []FieldDiff
		walkKey(c.path[:0], name, w, map[string]any{name: h}, &c.lk, &out)
		return len(out) == 0
	}
	if !wanted {
		r.Skip()
		return true
	}
	c.seen = appendNew(c.seen, name)
	c.path = append(c.path[:0], name)
	return c.same(c.path, w, r)
}

// same reports whether the live value at r's cursor, at path, has no
// difference from w, the desired value there, as walkKey finds them.
func (c *StreamSettle) same(path []string, w any, r FieldReader) bool {
	wm, ok := w.(map[string]any)
	if !ok {
		var out []FieldDiff
		walkValue(path, w, r.Value(), &c.lk, &out)
		return len(out) == 0
	}
	if !r.Object() {
		return len(wm) == 0
	}
	base := len(c.seen)
	same := true
	for k, ok := r.Next(); ok; k, ok = r.Next() {
		wk, wanted := wm[k]
		if !wanted { // below the top level only metadata has fields never compared
			r.Skip()
			continue
		}
		if !contains(c.seen[base:], k) {
			c.seen = append(c.seen, k)
		}
		if same = c.same(append(path, k), wk, r); !same {
			break // the object is decoded whole: stop reading
		}
	}
	same = same && noneMissing(path, wm, c.seen[base:])
	c.seen = c.seen[:base]
	return same
}

// noneMissing reports whether every field of want that a live map lacks
// (not in present, which holds only fields of want, each once) is one
// walkKey finds no difference in when absent: not compared, an empty map,
// or a zero value the server drops.
func noneMissing(path []string, want map[string]any, present []string) bool {
	if len(present) == len(want) {
		return true
	}
	for k, w := range want {
		if skippedKey(path, k) || contains(present, k) {
			continue
		}
		if wm, ok := w.(map[string]any); ok {
			if len(wm) != 0 {
				return false
			}
		} else if !isZero(w) {
			return false
		}
	}
	return true
}

// appendNew appends v to s unless s holds it.
func appendNew(s []string, v string) []string {
	if contains(s, v) {
		return s
	}
	return append(s, v)
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// Done returns the slim copy of the live object once every field was read
// through Field, and whether it settled: its metadata is as desired, no
// desired top-level field is missing, and no field gpuform owned is no
// longer desired.
func (c *StreamSettle) Done() (*unstructured.Unstructured, bool) {
	if wmd, ok := c.desired["metadata"]; ok {
		c.seen = appendNew(c.seen, "metadata") // compared whole below
		var out []FieldDiff
		walkKey(c.path[:0], "metadata", wmd, c.head.Object, &c.lk, &out)
		if len(out) > 0 {
			return nil, false
		}
	}
	if !noneMissing(nil, c.desired, c.seen) {
		return nil, false
	}
	for _, p := range removedPaths(c.head, c.desired, FieldManager) {
		if !isCommitStamp(p) {
			// Settle would look the path up in the whole object.
			return nil, false
		}
	}
	if c.whole && (len(ForeignPaths(c.head, c.desired)) > 0 || len(TakenPaths(c.head, c.desired)) > 0) {
		return nil, false // another manager's field: Settle looks it up
	}
	if c.spec != nil {
		c.head.Object["spec"] = c.spec
	}
	c.s.slim(c.head, c.desired)
	return c.head, true
}
