package engine

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Inventory is gpuform's record of what it applied to a stack: each
// object's key, UID, config address and the commit that last wrote it. It
// is kept in LockNamespace (InventoryConfigMaps), which no tenant may write,
// so ownership and applied commits come from it, never from what lies on
// the objects (labels, annotations, field managers), which whoever may
// write an object may set.
type Inventory struct {
	// Stack is the stack the record is of.
	Stack string
	// Commit is the stamp of the stack's last apply ("" outside git).
	Commit string
	// Objects are the objects gpuform applied and has not deleted since.
	Objects map[Key]InventoryEntry
	// Seq numbers the record's versions: a write stores Seq+1.
	Seq int64
}

// InventoryEntry is the record of one object.
type InventoryEntry struct {
	// UID is the object's UID when gpuform wrote it: an object at the same
	// key with another UID was deleted and recreated by someone else.
	UID string
	// Commit is the stamp of the apply that last wrote the object.
	Commit string
	// Address is the configuration address the object was applied from.
	Address string
}

// Owns reports whether the stack owns u, its live object at key k. With a
// record (Inventory), that is the record's word: k is recorded with u's
// UID. Without one (a stack last applied by a gpuform that kept none),
// Owned's rule stands in until the first apply writes the record: the
// stack's label and gpuform's field manager. The lock's namespace is never
// owned.
func (l *Live) Owns(k Key, u *unstructured.Unstructured, stack string) bool {
	if u == nil || IsLockNamespace(k) {
		return false
	}
	if l.Inventory == nil {
		return Owned(u, stack)
	}
	return l.Inventory.has(k, u)
}

// has reports whether k is recorded with u's UID, or is pending (recorded
// without a UID: a create an apply announced before its walk, which died
// before it recorded the UID) and u has the marks of gpuform's write
// (Owned).
func (inv *Inventory) has(k Key, u *unstructured.Unstructured) bool {
	e, ok := inv.Objects[k]
	if !ok {
		return false
	}
	if e.UID == "" {
		return Owned(u, inv.Stack)
	}
	return e.UID == uidOf(u)
}

// uidOf reads u's UID in place.
func uidOf(u *unstructured.Unstructured) string {
	md, _ := u.Object["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return uid
}

// AppliedCommit is the commit the stack last applied u (at key k) from:
// the record's, "" for an object the record does not hold with u's UID.
// Without a record it is the object's gpuform.dev/commit annotation, until
// the first apply writes one.
func (l *Live) AppliedCommit(k Key, u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	if l.Inventory == nil {
		return u.GetAnnotations()[AnnotCommit]
	}
	if !l.Inventory.has(k, u) {
		return ""
	}
	return l.Inventory.Objects[k].Commit
}

// AppliedAddress is the configuration address u (at key k) was applied
// from: the record's, else (no record yet) its gpuform.dev/address
// annotation.
func (l *Live) AppliedAddress(k Key, u *unstructured.Unstructured) string {
	if l.Inventory != nil {
		if !l.Inventory.has(k, u) {
			return ""
		}
		return l.Inventory.Objects[k].Address
	}
	return u.GetAnnotations()[AnnotAddress]
}

// isPatchedKey reports whether k is a Node or ClusterPolicy: objects
// gpuform patches, never creates, which the record does not hold.
func isPatchedKey(k Key) bool {
	return (k.Group == KindNode.Group && k.Kind == KindNode.Kind) || (k.Group == KindClusterPolicy.Group && k.Kind == KindClusterPolicy.Kind)
}

// NextInventory is the record after an apply of p to stack, made from
// live (read under the lock), which ended as rep (nil: nothing was
// applied): prev's entries (live.Inventory; with none yet, the objects of
// p.Migrate that Owned's rule gives the stack), plus every object the
// apply created, updated or adopted, with its UID (uids: what the writes
// answered, by key; else the live object's), minus every object it
// deleted. A change that failed or was skipped leaves its entry as it was.
func NextInventory(stack string, live *Live, p *Plan, rep *Report, uids map[Key]string) *Inventory {
	next := &Inventory{Stack: stack, Objects: map[Key]InventoryEntry{}}
	if prev := live.Inventory; prev != nil {
		next.Commit, next.Seq = prev.Commit, prev.Seq
		maps.Copy(next.Objects, prev.Objects)
		// Creates an earlier apply announced and never recorded: the
		// object's UID where the stack has it, else nothing.
		for k, e := range next.Objects {
			if e.UID != "" {
				continue
			}
			if u := live.Objects[k]; u != nil && prev.has(k, u) && uidOf(u) != "" {
				e.UID = uidOf(u)
				next.Objects[k] = e
			} else {
				delete(next.Objects, k)
			}
		}
	} else {
		for _, k := range p.Migrate {
			u := live.Objects[k]
			if u == nil || IsLockNamespace(k) || !Owned(u, stack) || uidOf(u) == "" {
				continue
			}
			a := u.GetAnnotations()
			next.Objects[k] = InventoryEntry{UID: uidOf(u), Commit: a[AnnotCommit], Address: a[AnnotAddress]}
		}
	}
	if rep == nil {
		return next
	}
	for _, r := range rep.Results {
		c := r.Change
		if r.Outcome != OutcomeApplied || isPatchedKey(c.Key) {
			continue
		}
		switch c.Action {
		case ActionDelete:
			delete(next.Objects, c.Key)
		case ActionCreate, ActionUpdate, ActionAdopt:
			uid := uids[c.Key]
			if uid == "" && c.Before != nil && c.Action != ActionCreate {
				uid = uidOf(c.Before)
			}
			if uid == "" {
				continue // not known: the next plan shows it as in the way
			}
			commit := c.After.GetAnnotations()[AnnotCommit]
			next.Objects[c.Key] = InventoryEntry{UID: uid, Commit: commit, Address: c.Address}
			if commit != "" {
				next.Commit = commit
			}
		}
	}
	return next
}

// PendingInventory is the record an apply of p writes before its walk:
// live's (NextInventory of no results) with every create of p announced,
// without a UID, so that an apply killed before it records what it
// created leaves objects the next plan still finds the stack's (see
// Inventory.has); NextInventory resolves such entries.
func PendingInventory(stack string, live *Live, p *Plan) *Inventory {
	inv := NextInventory(stack, live, p, nil, nil)
	for _, c := range p.Changes {
		if c.Action != ActionCreate || isPatchedKey(c.Key) {
			continue
		}
		if _, ok := inv.Objects[c.Key]; !ok {
			inv.Objects[c.Key] = InventoryEntry{Commit: c.After.GetAnnotations()[AnnotCommit], Address: c.Address}
		}
	}
	return inv
}
