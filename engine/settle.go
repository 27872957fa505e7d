package engine

import (
	"encoding/binary"
	"maps"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/kinds"
)

// Settler settles the live objects of a stack as a refresh reads them,
// against the desired objects Diff will compare them with: an object that
// the stack owns (Owned) and that DiffOwned finds equal to its desired
// object is kept as a slim copy (SlimLive) and its key recorded in
// Live.Settled, so that a size-L refresh does not hold every live object
// whole beside its desired copy, and Diff counts it unchanged without
// comparing it again. Every other object (changed, not owned, without a
// desired object, the lock's namespace) is kept whole.
//
// What a slim copy keeps is what every reader of Live.Objects after the
// diff reads of an unchanged object: its identity, labels and annotations
// (drift's commit and address stamps, prunes, Owner), its managedFields
// entries without their fieldsV1 (Owned, recheck of a saved plan), its
// resourceVersion and deletionTimestamp (ReadVersion: plan files,
// StaleObjects), and, for the kinds capacity.CheckFrom reads (settledSpec),
// spec.hard of a ResourceQuota and spec.resourceGroups of a ClusterQueue. A new reader of other fields
// of live objects must add them here, or read only changed objects
// (Change.Before, which are whole).
//
// A Settler is safe for concurrent use.
type Settler struct {
	d     *Desired
	reg   *kinds.Registry
	index map[Key]*Object
	// managed holds one copy of each slim managedFields list (see
	// slimManagedFields), by its content: the 47,516 unchanged objects
	// of size L have a handful of distinct ones.
	mu      sync.RWMutex
	managed map[string][]any
	// inv is the stack's record (UseInventory); nil: none (Owned's rule).
	inv *Inventory
}

// UseInventory makes the Settler settle only objects that inv, the stack's
// record the refresh read, holds with their UIDs (see Live.Owns), as Diff
// decides ownership. Call it before the first Settle or Stream; nil (no
// record yet) keeps Owned's rule.
func (s *Settler) UseInventory(inv *Inventory) { s.inv = inv }

// owns reports whether the stack owns u at key k, by Live.Owns's rule.
func (s *Settler) owns(k Key, u *unstructured.Unstructured) bool {
	if IsLockNamespace(k) {
		return false
	}
	if s.inv != nil {
		return s.inv.has(k, u)
	}
	return Owned(u, s.d.Stack)
}

// NewSettler returns the Settler of the live objects of d's stack.
func NewSettler(d *Desired) *Settler {
	idx := make(map[Key]*Object, len(d.Objects))
	dup := map[Key]bool{}
	for _, o := range d.Objects {
		k := o.Key()
		if _, ok := idx[k]; ok {
			dup[k] = true
		}
		idx[k] = o
	}
	for k := range dup {
		// Two desired objects at one key: Diff compares both; settle neither.
		delete(idx, k)
	}
	return &Settler{d: d, reg: d.KindRegistry(), index: idx, managed: map[string][]any{}}
}

// Settle returns what to keep of u, a live object of the stack as a
// refresh decoded it, and whether it was settled: compared with its
// desired object and found unchanged, so that what is kept is its slim
// copy (SlimLive's content). Settle takes u over: a settled u is slimmed
// in place, reusing its maps, and is what it returns.
func (s *Settler) Settle(u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	k := KeyOf(u)
	o := s.index[k]
	if o == nil || !s.owns(k, u) {
		return u, false
	}
	if len(DiffOwned(s.reg, o.Object.Object, u)) > 0 {
		return u, false
	}
	s.slim(u, o.Object.Object)
	return u, true
}

// sharedSlim returns the slim form of the managedFields list mf (see
// slimManagedFields): the one copy the Settler keeps of it, built the
// first time. Slim objects are only read, never changed, so they may
// share it.
func (s *Settler) sharedSlim(mf []any) []any {
	var buf [256]byte
	key := buf[:0]
	for _, e := range mf {
		m, ok := e.(map[string]any)
		if !ok {
			return slimEntries(mf) // not as the API server writes it: keep it apart
		}
		for _, f := range slimEntryFields {
			v, present := m[f]
			str, isString := v.(string)
			switch {
			case !present:
				key = append(key, 0)
				continue
			case !isString:
				return slimEntries(mf)
			}
			key = binary.AppendUvarint(append(key, 1), uint64(len(str)))
			key = append(key, str...)
		}
	}
	s.mu.RLock()
	c, ok := s.managed[string(key)]
	s.mu.RUnlock()
	if ok {
		return c
	}
	slim := slimEntries(mf)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.managed[string(key)]; ok {
		return c
	}
	s.managed[string(key)] = slim
	return slim
}

// settledSpec returns the field of the spec that a settled live object of
// kind k keeps, "" for none: capacity.CheckFrom (appliedQuotas) reads the
// quota a stack applied from ResourceQuotas' spec.hard and ClusterQueues'
// spec.resourceGroups of every live object, changed or not.
func settledSpec(k Key) string {
	switch {
	case k.Group == KindResourceQuota.Group && k.Kind == KindResourceQuota.Kind:
		return "hard"
	case k.Group == KindClusterQueue.Group && k.Kind == KindClusterQueue.Kind:
		return "resourceGroups"
	}
	return ""
}

// SlimLive returns the slim copy of a settled live object (see Settler):
// its apiVersion and kind; its metadata without managedFields' fieldsV1
// (and the times and types of the entries); of its spec only the field
// read past the diff (settledSpec), for ResourceQuotas and ClusterQueues.
// The maps kept are shared with u.
func SlimLive(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		c.Object["metadata"] = maps.Clone(md)
	}
	slimInPlace(c) // changes only the two maps cloned
	return c
}

// slim makes u, a settled live object, its slim copy (see SlimLive),
// changing its maps, with the managedFields list the Settler shares, and
// the labels and annotations maps of desired (its desired object's
// content) where u's hold the same strings: a settled object's are, but
// for what other managers or a commit stamp added. At size L that is
// 95,000 maps the refresh does not keep a second copy of (about 25 MB of
// the 242 MB live after it), which the collector no longer marks in each
// of its cycles. Neither side changes a map once compiled or settled: a
// desired object's annotations are replaced whole by a commit stamp
// (StampCommit), never set in place, and a refresh's live objects are
// its own (the simulated cluster hands out copies).
func (s *Settler) slim(u *unstructured.Unstructured, desired map[string]any) {
	slimFields(u)
	md := u.Object["metadata"].(map[string]any) // Owned read it
	if mf, ok := md["managedFields"].([]any); ok {
		md["managedFields"] = s.sharedSlim(mf)
	}
	wmd, _ := desired["metadata"].(map[string]any)
	for _, f := range [...]string{"labels", "annotations"} {
		if w, ok := wmd[f].(map[string]any); ok && sameStrings(md[f], w) {
			md[f] = w
		}
	}
}

// sameStrings reports whether live is a map with the same keys as want,
// each with the same string value. A refresh that settled an item as it
// streamed already gave it want itself: that is not compared again.
func sameStrings(live any, want map[string]any) bool {
	m, ok := live.(map[string]any)
	if !ok || len(m) != len(want) {
		return false
	}
	if reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(want).UnsafePointer() {
		return true
	}
	for k, w := range want {
		ws, ok := w.(string)
		if !ok {
			return false
		}
		if v, ok := m[k].(string); !ok || v != ws {
			return false
		}
	}
	return true
}

// slimInPlace makes u its slim copy (see SlimLive), changing its maps.
func slimInPlace(u *unstructured.Unstructured) {
	slimFields(u)
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		if mf, ok := md["managedFields"]; ok {
			md["managedFields"] = slimManagedFields(mf)
		}
	}
}

// slimFields drops every top-level field of u but apiVersion, kind,
// metadata and the part of its spec a slim copy keeps (keptSpec).
func slimFields(u *unstructured.Unstructured) {
	spec := keptSpec(u)
	for f := range u.Object {
		switch f {
		case "apiVersion", "kind", "metadata":
		default:
			delete(u.Object, f)
		}
	}
	if spec != nil {
		u.Object["spec"] = spec
	}
}

// keptSpec is the spec a slim copy of u keeps (settledSpec), nil for none.
func keptSpec(u *unstructured.Unstructured) map[string]any {
	f := settledSpec(KeyOf(u))
	if f == "" {
		return nil
	}
	spec, _ := u.Object["spec"].(map[string]any)
	v, ok := spec[f]
	if !ok {
		return nil
	}
	return map[string]any{f: v}
}

// slimEntryFields are the fields of a managedFields entry a slim copy keeps.
var slimEntryFields = [...]string{"manager", "operation", "apiVersion"}

// slimManagedFields keeps of each managedFields entry what Owned and
// Owner read: its manager, operation and apiVersion.
func slimManagedFields(v any) any {
	entries, ok := v.([]any)
	if !ok {
		return v
	}
	return slimEntries(entries)
}

// slimEntries is slimManagedFields of a list.
func slimEntries(entries []any) []any {
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		mf, ok := e.(map[string]any)
		if !ok {
			continue
		}
		slim := make(map[string]any, 3)
		for _, f := range slimEntryFields {
			if v, ok := mf[f]; ok {
				slim[f] = v
			}
		}
		out = append(out, slim)
	}
	return out
}
