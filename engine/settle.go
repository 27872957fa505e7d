package engine

import (
	"iter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gpuform/gpuform/engine/kinds"
)

// Settler settles the live objects of a stack once a refresh has read
// them, against the desired objects Diff will compare them with: an object
// that the stack owns (Owned) and that DiffOwned finds equal to its desired
// object is replaced by its slim copy (SlimLive) and its key recorded in
// Live.Settled, so that a large refresh does not hold every live object
// whole beside its desired copy, and Diff counts it unchanged without
// comparing it again. Every other object (changed, not owned, without a
// desired object, the lock's namespace) is kept whole.
//
// A Settler is safe for concurrent use.
type Settler struct {
	d     *Desired
	reg   *kinds.Registry
	index map[Key]*Object
	// inv is the stack's record (UseInventory); nil: none (Owned's rule).
	inv *Inventory
}

// UseInventory makes the Settler settle only objects that inv, the stack's
// record the refresh read, holds with their UIDs (see Live.Owns), as Diff
// decides ownership. Call it before the first Settle; nil (no
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
	return &Settler{d: d, reg: d.KindRegistry(), index: idx}
}

// Settle returns what to keep of u, a live object of the stack as a
// refresh decoded it, and whether it was settled: compared with its
// desired object and found unchanged, so that what is kept is its slim
// copy (SlimLive), which shares no map with u. An object not settled is
// u itself. Settle does not change u.
func (s *Settler) Settle(u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	k := KeyOf(u)
	o := s.index[k]
	if o == nil || !s.owns(k, u) {
		return u, false
	}
	if len(DiffOwned(s.reg, o.Object.Object, u)) > 0 {
		return u, false
	}
	return SlimLive(u), true
}

// SlimLive returns the slim copy of a settled live object: a deep copy of
// its apiVersion, kind and metadata, each managedFields entry reduced to
// what Owned and Owner read (slimEntryFields). What it leaves out is what
// the diff compared and found as desired: a reader of an unchanged
// object's content reads its desired object (Live.SettledFor,
// Live.Compared), as capacity reads the quotas a stack applied. The copy
// holds JSON values only, so DeepCopy works on it.
func SlimLive(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := make(map[string]any, 3)
	for _, f := range [...]string{"apiVersion", "kind"} {
		if v, ok := u.Object[f]; ok {
			out[f] = v
		}
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			if k == "managedFields" {
				m[k] = slimManagedFields(v)
				continue
			}
			m[k] = runtime.DeepCopyJSONValue(v)
		}
		out["metadata"] = m
	}
	return &unstructured.Unstructured{Object: out}
}

// slimEntryFields are the fields of a managedFields entry a slim copy keeps.
var slimEntryFields = [...]string{"manager", "operation", "apiVersion"}

// slimManagedFields keeps of each managedFields entry what Owned and
// Owner read: its manager, operation and apiVersion (strings), in a new
// list of new maps.
func slimManagedFields(v any) any {
	entries, ok := v.([]any)
	if !ok {
		return runtime.DeepCopyJSONValue(v)
	}
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		mf, ok := e.(map[string]any)
		if !ok {
			continue
		}
		slim := make(map[string]any, 3)
		for _, f := range slimEntryFields {
			if v, ok := mf[f]; ok {
				slim[f] = runtime.DeepCopyJSONValue(v)
			}
		}
		out = append(out, slim)
	}
	return out
}

// Compared yields every object of the stack in l as the diff compared it:
// for a settled key, its desired object in SettledFor (equal to the live
// object on every field gpuform sets, which is what the slim copy leaves
// out); for any other key, the live object. keep, when not nil, picks the
// keys to yield before any object is read.
func (l *Live) Compared(keep func(Key) bool) iter.Seq2[Key, *unstructured.Unstructured] {
	return func(yield func(Key, *unstructured.Unstructured) bool) {
		for k, u := range l.Objects {
			if (keep == nil || keep(k)) && !l.Settled[k] && !yield(k, u) {
				return
			}
		}
		if l.SettledFor == nil || len(l.Settled) == 0 {
			return
		}
		for _, o := range l.SettledFor.Objects {
			k := o.Key()
			if (keep == nil || keep(k)) && l.Settled[k] && !yield(k, o.Object) {
				return
			}
		}
	}
}
