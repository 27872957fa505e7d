package drift

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/mig"
)

// Classify classifies every difference between the live cluster and the
// configuration at the ref (desired, compiled at commit refCommit, and p,
// its plan against live). The rules are in docs/drift.md:
//
//   - update of a managed object: fields where the live object also differs
//     from the configuration at its gpuform.dev/commit stamp are live-edit;
//     the others (live equals what was applied, the ref says otherwise) are
//     unapplied. Without the configuration at the stamp: live-edit when the
//     stamp is the ref's commit, else unapplied.
//   - create: missing when the newest configuration applied to the
//     object's siblings (same config address; without siblings, the whole
//     stack) has the object, else unapplied.
//   - delete: unapplied when the configuration at the object's stamp has
//     it (the ref removed it), live-edit when it does not (the object was
//     created or relabelled by hand).
//   - node labels and annotations, ClusterPolicy fields: as updates, with
//     the newest configuration applied to the stack; hand-changed MIG
//     labels and annotations and a MIG state other than success are
//     hardware.
//   - hardware (with opts.Config): each pool's nodes against the pool.
func Classify(p *engine.Plan, desired *engine.Desired, live *engine.Live, refCommit string, opts Options) *Report {
	x := newDrifter(desired, live, refCommit, opts)
	r := &Report{Stack: desired.Stack, Cluster: live.Source, Commit: refCommit, Plan: p.Summary}
	r.Warnings = append(r.Warnings, engine.WarningTexts(p.Warnings)...)
	switch {
	case refCommit == "":
		r.Warnings = append(r.Warnings, "the configuration is not in a git repository, so drift cannot tell a hand edit from a configuration change not applied yet: every difference is reported as unapplied")
	case strings.HasSuffix(refCommit, "-dirty"):
		r.Warnings = append(r.Warnings, "the configuration was read from a work tree with uncommitted changes: objects applied from it carry the stamp "+ShortCommit(refCommit)+" whatever those changes were, so differences on them are reported as live edits; run drift on a commit (--ref) for a precise report")
	}
	hw := map[string]*Item{}
	for _, c := range p.Changes {
		switch {
		case c.Key.Kind == "Node" && c.Key.Group == "":
			x.node(c, hw)
		case c.Key.Kind == engine.KindClusterPolicy.Kind && c.Key.Group == engine.KindClusterPolicy.Group:
			x.clusterPolicy(c)
		case c.Action == engine.ActionCreate:
			x.create(c)
		case c.Action == engine.ActionConflict:
			x.conflict(c)
		case c.Action == engine.ActionDelete:
			x.delete(c)
		case c.Action == engine.ActionUpdate || c.Action == engine.ActionAdopt:
			x.update(c)
		}
	}
	x.failedMIG(hw)
	if opts.Config != nil {
		cat := opts.Catalog
		if cat == nil {
			cat = mig.Default()
		}
		for _, it := range CheckHardware(opts.Config, live, cat) {
			if cur := hw[it.Name]; cur != nil {
				cur.Details = append(cur.Details, it.Details...)
				continue
			}
			item := it
			hw[it.Name] = &item
		}
	}
	for _, it := range hw {
		x.items = append(x.items, *it)
	}
	rank := map[Class]int{}
	for i, c := range Classes() {
		rank[c] = i
	}
	sort.SliceStable(x.items, func(i, j int) bool {
		a, b := x.items[i], x.items[j]
		if a.Class != b.Class {
			return rank[a.Class] < rank[b.Class]
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Key().Less(b.Key())
	})
	r.Items = x.items
	if r.Items == nil {
		r.Items = []Item{}
	}
	return r
}

// drifter holds what the rules consult.
type drifter struct {
	ref     string
	desired *engine.Desired
	live    *engine.Live
	// at maps a commit to the desired state there (nil: unknown).
	at map[string]*engine.Desired
	// rank orders commits newest first; unknown commits rank last.
	rank map[string]int
	// byAddress counts the stamps of the live objects per config address;
	// stackStamps those of the whole stack.
	byAddress   map[string]map[string]int
	stackStamps map[string]int
	index       map[*engine.Desired]map[engine.Key]*engine.Object
	items       []Item
}

func newDrifter(d *engine.Desired, live *engine.Live, ref string, opts Options) *drifter {
	x := &drifter{ref: ref, desired: d, live: live, at: map[string]*engine.Desired{}, rank: map[string]int{},
		byAddress: map[string]map[string]int{}, stackStamps: map[string]int{}, index: map[*engine.Desired]map[engine.Key]*engine.Object{}}
	for k, u := range live.Objects {
		if live.Inventory != nil && !live.Owns(k, u, d.Stack) {
			continue // not the stack's: its stamps say nothing of what was applied
		}
		a, s := live.AppliedAddress(k, u), live.AppliedCommit(k, u)
		if x.byAddress[a] == nil {
			x.byAddress[a] = map[string]int{}
		}
		x.byAddress[a][s]++
		x.stackStamps[s]++
	}
	for i, a := range opts.Applied {
		if _, dup := x.rank[a.Commit]; dup {
			continue
		}
		x.rank[a.Commit] = i
		if a.Desired != nil {
			x.at[a.Commit] = a.Desired
		}
	}
	if ref != "" {
		x.at[ref] = d
		if _, ok := x.rank[ref]; !ok {
			x.rank[ref] = -1 // not ordered by the caller: take the ref as newest
		}
	}
	return x
}

// stamp returns the commit the stack last applied c's live object from:
// the stack's record's (engine.Live.AppliedCommit), never the object's
// gpuform.dev/commit annotation, which whoever may edit the object may set
// (the annotation stands in only until a stack's first apply writes its
// record).
func (x *drifter) stamp(c *engine.Change) string {
	return x.live.AppliedCommit(c.Key, c.Before)
}

// sameAsRef reports whether stamp s is the ref's commit (never true
// outside git).
func (x *drifter) sameAsRef(s string) bool { return s != "" && s == x.ref }

// desiredAt returns the configuration at commit s, or nil when unknown.
func (x *drifter) desiredAt(s string) *engine.Desired {
	if s == "" {
		return nil
	}
	return x.at[s]
}

// newest picks the newest of the stamps (by the caller's order; unordered
// stamps after ordered ones, the most frequent first), or "".
func (x *drifter) newest(stamps map[string]int) string {
	best, bestRank, bestN := "", 0, 0
	for s, n := range stamps {
		if s == "" {
			continue
		}
		r, ok := x.rank[s]
		if !ok {
			r = len(x.rank) + 1
		}
		if best == "" || r < bestRank || (r == bestRank && (n > bestN || (n == bestN && s < best))) {
			best, bestRank, bestN = s, r, n
		}
	}
	return best
}

// stackNewest is the newest commit stamped on any live object of the stack.
func (x *drifter) stackNewest() string { return x.newest(x.stackStamps) }

// has reports whether desired state d has an object with key k, and returns it.
func (x *drifter) has(d *engine.Desired, k engine.Key) *engine.Object {
	idx := x.index[d]
	if idx == nil {
		idx = make(map[engine.Key]*engine.Object, len(d.Objects))
		for _, o := range d.Objects {
			idx[o.Key()] = o
		}
		x.index[d] = idx
	}
	return idx[k]
}

// add records an item of class for change c.
func (x *drifter) add(class Class, c *engine.Change, applied string, fields []engine.FieldDiff, details ...string) {
	if fields == nil {
		fields = []engine.FieldDiff{}
	}
	x.items = append(x.items, Item{
		Class: class, Address: c.Address, APIVersion: c.APIVersion, Kind: c.Key.Kind, Namespace: c.Key.Namespace, Name: c.Key.Name,
		Action: c.Action, AppliedCommit: applied, Fields: fields, Details: details, Sensitive: c.Sensitive,
	})
}

// update classifies the fields of a managed object that differ from the ref.
func (x *drifter) update(c *engine.Change) {
	s := x.stamp(c)
	if x.sameAsRef(s) {
		x.add(LiveEdit, c, s, c.Fields, "changed in the cluster since it was applied from "+ShortCommit(s)+"; apply sets it back")
		return
	}
	if ds := x.desiredAt(s); ds != nil {
		if o := x.has(ds, c.Key); o != nil {
			// Another manager's field in an object owned whole is a
			// hand edit whatever the applied commit: DiffOwned finds it
			// against the applied configuration too.
			hand, unapplied := splitFields(c.Fields, engine.DiffOwned(ds.KindRegistry(), o.Object.Object, c.Before))
			if len(hand) > 0 {
				x.add(LiveEdit, c, s, hand, "changed in the cluster since it was applied from "+ShortCommit(s)+"; apply sets it to the configuration at the ref")
			}
			if len(unapplied) > 0 {
				x.add(Unapplied, c, s, unapplied, "applied from "+ShortCommit(s)+"; the configuration at the ref changes it")
			}
			return
		}
	}
	x.add(Unapplied, c, s, c.Fields, appliedFrom(s)+"; the configuration at the ref differs")
}

// appliedFrom says which commit an object was applied from, in words.
func appliedFrom(s string) string {
	switch {
	case s == "":
		return "applied without a commit stamp (from outside git, or by an older gpuform)"
	case strings.HasSuffix(s, "-dirty"):
		return "applied from a work tree with uncommitted changes at " + ShortCommit(s)
	}
	return "applied from " + ShortCommit(s)
}

// splitFields divides the ref's field differences into those where live
// also differs from the applied configuration (sFields: hand edits) and
// the rest (live is as applied: unapplied changes).
func splitFields(fields, sFields []engine.FieldDiff) (hand, unapplied []engine.FieldDiff) {
	for _, f := range fields {
		if overlaps(f.Path, sFields) {
			hand = append(hand, f)
		} else {
			unapplied = append(unapplied, f)
		}
	}
	return hand, unapplied
}

// overlaps reports whether path equals, contains or lies under a path of fs.
func overlaps(path string, fs []engine.FieldDiff) bool {
	return slices.ContainsFunc(fs, func(f engine.FieldDiff) bool {
		return f.Path == path || under(path, f.Path) || under(f.Path, path)
	})
}

// under reports whether path p lies below path prefix.
func under(p, prefix string) bool {
	return len(p) > len(prefix) && strings.HasPrefix(p, prefix) && (p[len(prefix)] == '.' || p[len(prefix)] == '[')
}

// siblingStamps returns the stamps of the live objects of c's config
// address (c's own object is not live: c is a create or a conflict), or of
// the whole stack when there are none.
func (x *drifter) siblingStamps(c *engine.Change) map[string]int {
	if stamps := x.byAddress[c.Address]; len(stamps) > 0 {
		return stamps
	}
	return x.stackStamps
}

// wasApplied reports whether the newest configuration applied around c
// (its siblings', else the stack's) has c's object, and that commit.
func (x *drifter) wasApplied(c *engine.Change) (bool, string) {
	s := x.newest(x.siblingStamps(c))
	if x.sameAsRef(s) {
		return true, s // the ref has it: it is a create
	}
	if ds := x.desiredAt(s); ds != nil {
		return x.has(ds, c.Key) != nil, s
	}
	return false, s
}

// create: an object the ref has and the cluster lacks.
func (x *drifter) create(c *engine.Change) {
	if ok, s := x.wasApplied(c); ok {
		x.add(Missing, c, s, nil, "applied from "+ShortCommit(s)+" and since deleted from the cluster; apply creates it again")
		return
	}
	x.add(Unapplied, c, "", nil, "added by the configuration at the ref; not applied yet")
}

// conflict: an object the ref has, in the way and not managed by the stack.
func (x *drifter) conflict(c *engine.Change) {
	if ok, s := x.wasApplied(c); ok {
		x.add(LiveEdit, c, s, nil, fmt.Sprintf("applied from %s, then replaced by an object this stack does not manage (owner: %s); apply refuses to touch it unless --adopt", ShortCommit(s), engine.Owner(c.Before)))
		return
	}
	x.add(Unapplied, c, "", nil, c.Reason)
}

// delete: an object labelled with the stack that the ref does not have.
func (x *drifter) delete(c *engine.Change) {
	s := x.stamp(c)
	if x.sameAsRef(s) {
		x.add(LiveEdit, c, s, nil, "carries the stack's labels and the stamp of "+ShortCommit(s)+", whose configuration does not have it: created or relabelled by hand; apply deletes it")
		return
	}
	if ds := x.desiredAt(s); ds != nil {
		if x.has(ds, c.Key) == nil {
			x.add(LiveEdit, c, s, nil, "carries the stack's labels, but the configuration at "+ShortCommit(s)+" (its stamp) does not have it: created or relabelled by hand; apply deletes it")
			return
		}
		x.add(Unapplied, c, s, nil, "applied from "+ShortCommit(s)+"; the configuration at the ref removes it")
		return
	}
	x.add(Unapplied, c, s, nil, appliedFrom(s)+"; not in the configuration at the ref, so apply deletes it")
}
