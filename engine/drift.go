package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// DriftClass says why the live cluster differs from the configuration at a
// git ref. docs/drift.md states the rules; Drift implements them.
type DriftClass string

// Drift classes, in report order.
const (
	// DriftLiveEdit: a managed object (or a node's pool labels) differs from
	// the configuration it was applied from: someone changed it by hand.
	DriftLiveEdit DriftClass = "live-edit"
	// DriftUnapplied: the configuration at the ref differs from the
	// configuration the object was applied from: the ref is not applied yet.
	DriftUnapplied DriftClass = "unapplied"
	// DriftMissing: an object that was applied is gone from the cluster.
	DriftMissing DriftClass = "missing"
	// DriftHardware: a pool's node has other GPUs, another driver, a failed
	// MIG state or MIG instances other than its layout.
	DriftHardware DriftClass = "hardware"
)

// DriftClasses lists every class in report order.
var DriftClasses = []DriftClass{DriftLiveEdit, DriftUnapplied, DriftMissing, DriftHardware}

// DriftItem is one object that drifted, in one class. An object whose
// fields drifted for two reasons (a hand edit and an unapplied change) is
// two items, each with its own fields.
type DriftItem struct {
	Class      DriftClass `json:"class"`
	Address    string     `json:"address"`
	APIVersion string     `json:"api_version"`
	Kind       string     `json:"kind"`
	Namespace  string     `json:"namespace,omitempty"`
	Name       string     `json:"name"`
	// Action is what apply (and drift --fix) would do to the object:
	// create, update, delete or conflict; empty for hardware findings that
	// apply cannot fix.
	Action Action `json:"action,omitempty"`
	// AppliedCommit is the gpuform.dev/commit stamp of the live object (for
	// nodes: the newest commit applied to the stack).
	AppliedCommit string `json:"applied_commit,omitempty"`
	// Fields are the differing fields: before is the live value, after the
	// value at the ref (what apply would set), as in a plan.
	Fields []FieldDiff `json:"fields"`
	// Details say, in words, what is wrong.
	Details   []string `json:"details"`
	Sensitive bool     `json:"sensitive,omitempty"`
}

// Key returns the item's object key.
func (it *DriftItem) Key() Key {
	return Key{Group: groupOf(it.APIVersion), Kind: it.Kind, Namespace: it.Namespace, Name: it.Name}
}

func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// DriftReport is the outcome of one drift check of a stack.
type DriftReport struct {
	Stack string
	// Cluster describes the cluster read (Live.Source).
	Cluster string
	// Commit is the commit the configuration was read at ("<sha>-dirty" for
	// a dirty work tree, "" outside git); ConfigSource describes it (set by
	// the caller).
	Commit       string
	ConfigSource *ConfigSource
	Items        []DriftItem
	Warnings     []string
	// Plan counts what apply would do to remove the drift.
	Plan Summary
	// CheckedAt is when the cluster was read (set by the caller).
	CheckedAt time.Time
}

// InSync reports whether nothing drifted.
func (r *DriftReport) InSync() bool { return len(r.Items) == 0 }

// Counts returns the number of drifted objects per class (every class
// present, zero when none).
func (r *DriftReport) Counts() map[DriftClass]int {
	out := make(map[DriftClass]int, len(DriftClasses))
	for _, c := range DriftClasses {
		out[c] = 0
	}
	for _, it := range r.Items {
		out[it.Class]++
	}
	return out
}

// Fixable reports whether apply can remove some of the drift: anything but
// hardware findings without a planned change.
func (r *DriftReport) Fixable() bool {
	for _, it := range r.Items {
		if it.Action != "" {
			return true
		}
	}
	return false
}

// AppliedConfig is the desired state compiled from the configuration at a
// commit that live objects carry in gpuform.dev/commit.
type AppliedConfig struct {
	Commit string
	// Desired is nil when the configuration at the commit could not be
	// loaded (not in the repository, or no longer valid); the entry still
	// says where the commit stands in time.
	Desired *Desired
}

// DriftOptions give Drift what it cannot read from the plan.
type DriftOptions struct {
	// Applied are the configurations at the commits stamped on live
	// objects, newest commit first; the ref's commit may be among them.
	// Without them Drift falls back to comparing stamps (docs/drift.md).
	Applied []AppliedConfig
	// Config and Catalog enable the hardware checks of the pools' nodes
	// (GPU model, count, driver, MIG state and instances).
	Config  *config.Config
	Catalog *mig.Catalog
}

// Drift classifies every difference between the live cluster and the
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
func Drift(p *Plan, desired *Desired, live *Live, refCommit string, opts DriftOptions) *DriftReport {
	x := newDrifter(desired, live, refCommit, opts)
	r := &DriftReport{Stack: desired.Stack, Cluster: live.Source, Commit: refCommit, Plan: p.Summary}
	r.Warnings = append(r.Warnings, p.Warnings...)
	switch {
	case refCommit == "":
		r.Warnings = append(r.Warnings, "the configuration is not in a git repository, so drift cannot tell a hand edit from a configuration change not applied yet: every difference is reported as unapplied")
	case strings.HasSuffix(refCommit, "-dirty"):
		r.Warnings = append(r.Warnings, "the configuration was read from a work tree with uncommitted changes: objects applied from it carry the stamp "+ShortCommit(refCommit)+" whatever those changes were, so differences on them are reported as live edits; run drift on a commit (--ref) for a precise report")
	}
	hw := map[string]*DriftItem{}
	for _, c := range p.Changes {
		switch {
		case c.Key.Kind == "Node" && c.Key.Group == "":
			x.node(c, hw)
		case c.Key.Kind == KindClusterPolicy.Kind && c.Key.Group == KindClusterPolicy.Group:
			x.clusterPolicy(c)
		case c.Action == ActionCreate:
			x.create(c)
		case c.Action == ActionConflict:
			x.conflict(c)
		case c.Action == ActionDelete:
			x.delete(c)
		case c.Action == ActionUpdate || c.Action == ActionAdopt:
			x.update(c)
		}
	}
	x.failedMIG(hw)
	if opts.Config != nil {
		cat := opts.Catalog
		if cat == nil {
			cat = mig.Default()
		}
		for _, it := range HardwareDrift(opts.Config, live, cat) {
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
	rank := map[DriftClass]int{}
	for i, c := range DriftClasses {
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
		r.Items = []DriftItem{}
	}
	return r
}

// drifter holds what the rules consult.
type drifter struct {
	ref     string
	desired *Desired
	live    *Live
	// at maps a commit to the desired state there (nil: unknown).
	at map[string]*Desired
	// rank orders commits newest first; unknown commits rank last.
	rank map[string]int
	// byAddress counts the stamps of the live objects per config address;
	// stackStamps those of the whole stack.
	byAddress   map[string]map[string]int
	stackStamps map[string]int
	index       map[*Desired]map[Key]*Object
	items       []DriftItem
}

func newDrifter(d *Desired, live *Live, ref string, opts DriftOptions) *drifter {
	x := &drifter{ref: ref, desired: d, live: live, at: map[string]*Desired{}, rank: map[string]int{},
		byAddress: map[string]map[string]int{}, stackStamps: map[string]int{}, index: map[*Desired]map[Key]*Object{}}
	for _, u := range live.Objects {
		a, s := u.GetAnnotations()[AnnotAddress], stamp(u)
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

// stamp returns the gpuform.dev/commit annotation of a live object.
func stamp(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	return u.GetAnnotations()[AnnotCommit]
}

// sameAsRef reports whether stamp s is the ref's commit (never true
// outside git).
func (x *drifter) sameAsRef(s string) bool { return s != "" && s == x.ref }

// desiredAt returns the configuration at commit s, or nil when unknown.
func (x *drifter) desiredAt(s string) *Desired {
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
func (x *drifter) has(d *Desired, k Key) *Object {
	idx := x.index[d]
	if idx == nil {
		idx = d.index()
		x.index[d] = idx
	}
	return idx[k]
}

func (x *drifter) add(class DriftClass, c *Change, applied string, fields []FieldDiff, details ...string) {
	if fields == nil {
		fields = []FieldDiff{}
	}
	x.items = append(x.items, DriftItem{
		Class: class, Address: c.Address, APIVersion: c.APIVersion, Kind: c.Key.Kind, Namespace: c.Key.Namespace, Name: c.Key.Name,
		Action: c.Action, AppliedCommit: applied, Fields: fields, Details: details, Sensitive: c.Sensitive,
	})
}

// update classifies the fields of a managed object that differ from the ref.
func (x *drifter) update(c *Change) {
	s := stamp(c.Before)
	if x.sameAsRef(s) {
		x.add(DriftLiveEdit, c, s, c.Fields, "changed in the cluster since it was applied from "+ShortCommit(s)+"; apply sets it back")
		return
	}
	if ds := x.desiredAt(s); ds != nil {
		if o := x.has(ds, c.Key); o != nil {
			hand, unapplied := splitFields(c.Fields, diffFields(o.Object.Object, c.Before, FieldManager))
			if len(hand) > 0 {
				x.add(DriftLiveEdit, c, s, hand, "changed in the cluster since it was applied from "+ShortCommit(s)+"; apply sets it to the configuration at the ref")
			}
			if len(unapplied) > 0 {
				x.add(DriftUnapplied, c, s, unapplied, "applied from "+ShortCommit(s)+"; the configuration at the ref changes it")
			}
			return
		}
	}
	x.add(DriftUnapplied, c, s, c.Fields, appliedFrom(s)+"; the configuration at the ref differs")
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
func splitFields(fields, sFields []FieldDiff) (hand, unapplied []FieldDiff) {
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
func overlaps(path string, fs []FieldDiff) bool {
	for _, f := range fs {
		if f.Path == path || under(path, f.Path) || under(f.Path, path) {
			return true
		}
	}
	return false
}

// under reports whether path p lies below path prefix.
func under(p, prefix string) bool {
	return len(p) > len(prefix) && strings.HasPrefix(p, prefix) && (p[len(prefix)] == '.' || p[len(prefix)] == '[')
}

// siblingStamps returns the stamps of the live objects of c's config
// address (c's own object is not live: c is a create or a conflict), or of
// the whole stack when there are none.
func (x *drifter) siblingStamps(c *Change) map[string]int {
	if stamps := x.byAddress[c.Address]; len(stamps) > 0 {
		return stamps
	}
	return x.stackStamps
}

// wasApplied reports whether the newest configuration applied around c
// (its siblings', else the stack's) has c's object, and that commit.
func (x *drifter) wasApplied(c *Change) (bool, string) {
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
func (x *drifter) create(c *Change) {
	if ok, s := x.wasApplied(c); ok {
		x.add(DriftMissing, c, s, nil, "applied from "+ShortCommit(s)+" and since deleted from the cluster; apply creates it again")
		return
	}
	x.add(DriftUnapplied, c, "", nil, "added by the configuration at the ref; not applied yet")
}

// conflict: an object the ref has, in the way and not managed by the stack.
func (x *drifter) conflict(c *Change) {
	if ok, s := x.wasApplied(c); ok {
		x.add(DriftLiveEdit, c, s, nil, fmt.Sprintf("applied from %s, then replaced by an object this stack does not manage (owner: %s); apply refuses to touch it unless --adopt", ShortCommit(s), Owner(c.Before)))
		return
	}
	x.add(DriftUnapplied, c, "", nil, c.Reason)
}

// delete: an object labelled with the stack that the ref does not have.
func (x *drifter) delete(c *Change) {
	s := stamp(c.Before)
	if x.sameAsRef(s) {
		x.add(DriftLiveEdit, c, s, nil, "carries the stack's labels and the stamp of "+ShortCommit(s)+", whose configuration does not have it: created or relabelled by hand; apply deletes it")
		return
	}
	if ds := x.desiredAt(s); ds != nil {
		if x.has(ds, c.Key) == nil {
			x.add(DriftLiveEdit, c, s, nil, "carries the stack's labels, but the configuration at "+ShortCommit(s)+" (its stamp) does not have it: created or relabelled by hand; apply deletes it")
			return
		}
		x.add(DriftUnapplied, c, s, nil, "applied from "+ShortCommit(s)+"; the configuration at the ref removes it")
		return
	}
	x.add(DriftUnapplied, c, s, nil, appliedFrom(s)+"; not in the configuration at the ref, so apply deletes it")
}

// failedMIG reports the nodes of MIG pools whose state is failed and that
// the plan did not already report (the plan re-waits a failed node only
// when nothing else about it changes).
func (x *drifter) failedMIG(hw map[string]*DriftItem) {
	for _, n := range x.live.Nodes {
		if hw[n.GetName()] != nil {
			continue
		}
		for _, np := range x.desired.Pools {
			if np.MIGState == "" || !selects(np.Selector, n.GetLabels()) {
				continue
			}
			state := n.GetLabels()[np.MIGState]
			if np.MIGState == AnnotMIGState {
				state = n.GetAnnotations()[np.MIGState]
			}
			if strings.HasPrefix(state, "failed") {
				hw[n.GetName()] = &DriftItem{Class: DriftHardware, Address: np.Address, APIVersion: "v1", Kind: "Node", Name: n.GetName(), Fields: []FieldDiff{},
					Details: []string{fmt.Sprintf("MIG state %s is %q: the last re-partitioning failed; see the GPU Operator's mig-manager (or gpuform agent) logs on the node", np.MIGState, state)}}
			}
		}
	}
}

// isMIGField reports whether a node field is a MIG layout label or annotation.
func isMIGField(path string) bool {
	return strings.Contains(path, LabelMIGConfig+`"`) || strings.Contains(path, AnnotMIGLayout)
}

// isMIGStateField reports whether a node field is a MIG state label or annotation.
func isMIGStateField(path string) bool {
	return path == statePath(LabelMIGState) || path == statePath(AnnotMIGState)
}

// node classifies a node's label and annotation changes against the newest
// configuration applied to the stack. Hardware findings go into hw by node.
func (x *drifter) node(c *Change, hw map[string]*DriftItem) {
	s := x.stackNewest()
	hardware := func(f FieldDiff, detail string) {
		it := hw[c.Key.Name]
		if it == nil {
			it = &DriftItem{Class: DriftHardware, Address: c.Address, APIVersion: "v1", Kind: "Node", Name: c.Key.Name, Action: c.Action, AppliedCommit: s, Fields: []FieldDiff{}}
			hw[c.Key.Name] = it
		}
		it.Action = c.Action
		it.Fields = append(it.Fields, f)
		it.Details = append(it.Details, detail)
	}
	if c.Action == ActionConflict {
		selected := false
		if ds := x.desiredAt(s); ds != nil && !x.sameAsRef(s) {
			for _, np := range ds.Pools {
				if selects(np.Selector, c.Before.GetLabels()) {
					selected = true
				}
			}
		}
		if selected {
			x.add(DriftLiveEdit, c, s, nil, c.Reason)
		} else {
			x.add(DriftUnapplied, c, s, nil, c.Reason)
		}
		return
	}
	var sFields []FieldDiff
	known := false
	switch ds := x.desiredAt(s); {
	case x.sameAsRef(s):
		known = true // every difference from the ref is unexplained
	case ds != nil:
		if changes, err := diffNodes(ds, &Live{Nodes: []*unstructured.Unstructured{c.Before}}, DiffOptions{}); err == nil {
			known = true
			for _, sc := range changes {
				sFields = append(sFields, sc.Fields...)
			}
		}
	}
	var hand, unapplied []FieldDiff
	for _, f := range c.Fields {
		switch {
		case isMIGStateField(f.Path):
			if state := fmt.Sprint(f.Before); strings.HasPrefix(state, "failed") {
				hardware(f, fmt.Sprintf("MIG state is %q: the last re-partitioning failed; apply marks the node pending and waits again", state))
			} else {
				hardware(f, fmt.Sprintf("MIG state is %q, not success: re-partitioning has not finished; apply waits for it", state))
			}
		case known && (x.sameAsRef(s) || overlaps(f.Path, sFields)) && isMIGField(f.Path):
			hardware(f, fmt.Sprintf("MIG configuration %s is %s, not the pool's layout %s, and not what was applied: changed on the node (by hand, or by the GPU Operator)", f.Path, formatValue(f.Before), formatValue(f.After)))
		case known && (x.sameAsRef(s) || overlaps(f.Path, sFields)):
			hand = append(hand, f)
		default:
			unapplied = append(unapplied, f)
		}
	}
	if len(hand) > 0 {
		x.add(DriftLiveEdit, c, s, hand, "the node's pool labels or annotations were changed since "+ShortCommit(s)+" was applied; apply sets them back")
	}
	if len(unapplied) > 0 {
		x.add(DriftUnapplied, c, s, unapplied, "the pool configuration at the ref labels the node differently from "+ShortCommit(s)+", the newest commit applied")
	}
}

// clusterPolicy classifies the GPU Operator's ClusterPolicy fields gpuform sets.
func (x *drifter) clusterPolicy(c *Change) {
	s := x.stackNewest()
	if x.sameAsRef(s) {
		x.add(DriftLiveEdit, c, s, c.Fields, "changed since "+ShortCommit(s)+" was applied; apply points it back at gpuform's ConfigMaps")
		return
	}
	if ds := x.desiredAt(s); ds != nil {
		if changes, _, err := diffClusterPolicies(ds, &Live{ClusterPolicies: []*unstructured.Unstructured{c.Before}}); err == nil {
			var sFields []FieldDiff
			for _, sc := range changes {
				sFields = append(sFields, sc.Fields...)
			}
			hand, unapplied := splitFields(c.Fields, sFields)
			if len(hand) > 0 {
				x.add(DriftLiveEdit, c, s, hand, "changed since "+ShortCommit(s)+" was applied; apply points it back at gpuform's ConfigMaps")
			}
			if len(unapplied) > 0 {
				x.add(DriftUnapplied, c, s, unapplied, "the configuration at the ref needs other GPU Operator ConfigMaps than "+ShortCommit(s))
			}
			return
		}
	}
	x.add(DriftUnapplied, c, s, c.Fields, "the configuration at the ref needs other GPU Operator ConfigMaps")
}

// HardwareDrift checks every pool's nodes against the pool: a node that
// reports no GPUs, GPUs of another model, another number of GPUs than most
// of the pool's nodes, a driver outside driver_version, an inventory the
// node's labels contradict, a failed MIG state, or (MIG state success and
// the layout in place) MIG instances other than the layout's. One item per
// node, Action empty: apply cannot fix hardware.
func HardwareDrift(cfg *config.Config, live *Live, cat *mig.Catalog) []DriftItem {
	var out []DriftItem
	for _, p := range cfg.Pools {
		var members []*unstructured.Unstructured
		for _, n := range live.Nodes {
			if selects(p.NodeSelector, n.GetLabels()) {
				members = append(members, n)
			}
		}
		invs := make([]NodeInventory, len(members))
		counts := map[int]int{}
		for i, n := range members {
			invs[i] = InventoryOf(n, cat)
			if invs[i].GPUs > 0 {
				counts[invs[i].GPUs]++
			}
		}
		usual := 0 // the most common GPU count; ties go to the larger
		for gpus, n := range counts {
			if n > counts[usual] || (n == counts[usual] && gpus > usual) {
				usual = gpus
			}
		}
		want := catalogKey(cat, p.GPU)
		for i, n := range members {
			inv := invs[i]
			var details []string
			switch {
			case inv.Source == "none" || inv.GPUs == 0:
				details = append(details, fmt.Sprintf("reports no GPUs; pool %s wants %s GPUs", p.Name, want))
			case inv.Source != "capacity" && inv.Model != want:
				details = append(details, fmt.Sprintf("has %s GPUs; pool %s wants %s", inv.Model, p.Name, want))
			}
			if inv.GPUs > 0 && usual > 0 && inv.GPUs != usual && counts[usual] > 1 {
				details = append(details, fmt.Sprintf("has %s where the pool's other nodes have %d: a GPU may have failed or fallen off the bus", count(inv.GPUs, "GPU"), usual))
			}
			if inv.Warning != "" {
				details = append(details, inv.Warning)
			}
			if p.DriverVersion != "" && inv.Driver != "" {
				if ok, err := config.SatisfiesVersion(p.DriverVersion, inv.Driver); err == nil && !ok {
					details = append(details, fmt.Sprintf("runs driver %s; pool %s needs %s", inv.Driver, p.Name, p.DriverVersion))
				}
			}
			if p.MIGLayout != nil {
				details = append(details, migHardware(cfg, p, n, inv)...)
			}
			if len(details) > 0 {
				out = append(out, DriftItem{Class: DriftHardware, Address: p.Address, APIVersion: "v1", Kind: "Node", Name: n.GetName(), Fields: []FieldDiff{}, Details: details})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// migHardware checks a MIG pool's node: a failed state, and, when the
// state is success and the node carries the layout, the MIG instances.
func migHardware(cfg *config.Config, p *config.Pool, n *unstructured.Unstructured, inv NodeInventory) []string {
	var state string
	var inPlace bool
	if cfg.Settings.MIGBackend == config.BackendAgent {
		state = n.GetAnnotations()[AnnotMIGState]
		layout, err := AgentLayout(p.MIGLayout)
		inPlace = err == nil && n.GetAnnotations()[AnnotMIGLayout] == layout
	} else {
		state = n.GetLabels()[LabelMIGState]
		name, _ := MIGPartedName(p.MIGLayout)
		inPlace = n.GetLabels()[LabelMIGConfig] == name
	}
	if state != "success" || !inPlace || inv.GPUs == 0 || (inv.Source != "agent" && len(inv.MIG) == 0) {
		return nil // not done yet, not ours yet, or nothing reported to compare
	}
	want := layoutInstances(p.MIGLayout, inv.GPUs)
	if equalCounts(want, inv.MIG) {
		return nil
	}
	return []string{fmt.Sprintf("MIG state is success but the node has MIG instances %s where layout %s on %s asks for %s", countsString(inv.MIG), p.MIGLayout.Name, count(inv.GPUs, "GPU"), countsString(want))}
}

// layoutInstances is how many instances of each profile a layout makes on
// a node of gpus GPUs.
func layoutInstances(l *config.MIGLayout, gpus int) map[string]int {
	out := map[string]int{}
	if len(l.Devices) == 0 {
		for prof, n := range l.Slices {
			if n > 0 {
				out[prof] += n * gpus
			}
		}
		return out
	}
	for _, g := range l.Devices {
		if !g.Enabled {
			continue
		}
		for _, i := range g.Indexes {
			if i >= gpus {
				continue
			}
			for prof, n := range g.Slices {
				if n > 0 {
					out[prof] += n
				}
			}
		}
	}
	return out
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// countsString renders profile counts as "1g.10gb x14, 3g.40gb x2" (or "none").
func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// ShortCommit shortens a commit hash for messages ("<12 hex>", keeping a
// -dirty suffix).
func ShortCommit(s string) string {
	if s == "" {
		return "(no commit)"
	}
	base, dirty := strings.CutSuffix(s, "-dirty")
	if len(base) > 12 {
		base = base[:12]
	}
	if dirty {
		return base + "-dirty"
	}
	return base
}

// ---- Outputs ----

// DriftJSONFormatVersion is the version of the drift --json schema (docs/drift.md).
const DriftJSONFormatVersion = "1.0"

// JSONDrift is the --json form of a drift report.
type JSONDrift struct {
	FormatVersion string             `json:"format_version"`
	Stack         string             `json:"stack"`
	Cluster       string             `json:"cluster"`
	Commit        string             `json:"commit"`
	ConfigSource  *ConfigSource      `json:"config_source,omitempty"`
	CheckedAt     string             `json:"checked_at"`
	InSync        bool               `json:"in_sync"`
	Counts        map[DriftClass]int `json:"counts"`
	Drift         []DriftItem        `json:"drift"`
	Warnings      []string           `json:"warnings"`
	// Plan counts what apply (drift --fix) would do.
	Plan Summary `json:"plan"`
	// Fix is the state after drift --fix, when it ran.
	Fix *JSONDrift `json:"fix,omitempty"`
}

// NewJSONDrift converts a report to its --json form, hiding the values of
// sensitive objects.
func NewJSONDrift(r *DriftReport) JSONDrift {
	out := JSONDrift{
		FormatVersion: DriftJSONFormatVersion, Stack: r.Stack, Cluster: r.Cluster, Commit: r.Commit, ConfigSource: r.ConfigSource,
		InSync: r.InSync(), Counts: r.Counts(), Drift: make([]DriftItem, 0, len(r.Items)), Warnings: r.Warnings, Plan: r.Plan,
	}
	if !r.CheckedAt.IsZero() {
		out.CheckedAt = r.CheckedAt.UTC().Format(time.RFC3339)
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, it := range r.Items {
		if it.Sensitive {
			fields := make([]FieldDiff, len(it.Fields))
			for i, f := range it.Fields {
				fields[i] = FieldDiff{Path: f.Path, Op: f.Op, Before: hideIfSet(f.Before), After: hideIfSet(f.After)}
			}
			it.Fields = fields
		}
		if it.Details == nil {
			it.Details = []string{}
		}
		out.Drift = append(out.Drift, it)
	}
	return out
}

// RenderDriftJSON writes the report (and, after drift --fix, the state
// after the fix) as indented JSON.
func RenderDriftJSON(w io.Writer, r, after *DriftReport) error {
	j := NewJSONDrift(r)
	if after != nil {
		a := NewJSONDrift(after)
		j.Fix = &a
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// classHeading says what a class means, for text and Markdown.
var classHeading = map[DriftClass]string{
	DriftLiveEdit:  "changed in the cluster by hand since it was applied",
	DriftUnapplied: "the configuration at the ref is not applied yet",
	DriftMissing:   "applied, then deleted from the cluster",
	DriftHardware:  "nodes whose GPUs or MIG state differ from their pool",
}

// DriftSummaryLine is the report's last line.
func DriftSummaryLine(r *DriftReport) string {
	if r.InSync() {
		return "No drift. The cluster matches the configuration."
	}
	counts := r.Counts()
	parts := make([]string, len(DriftClasses))
	for i, c := range DriftClasses {
		parts[i] = fmt.Sprintf("%d %s", counts[c], c)
	}
	return "Drift: " + strings.Join(parts, ", ") + "."
}

// where describes the configuration the report compares with.
func (r *DriftReport) where() string {
	if r.ConfigSource != nil {
		return r.ConfigSource.String()
	}
	if r.Commit == "" {
		return "working directory (not in git)"
	}
	return ShortCommit(r.Commit)
}

// RenderDriftText writes the report for a terminal: the drifted objects by
// class with their fields (live -> configuration), then a summary line.
func RenderDriftText(w io.Writer, r *DriftReport, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	tr := textRenderer{w: bw, color: opts.Color}
	fmt.Fprintf(bw, "Drift check of stack %s: cluster %s against the configuration at %s.\n", r.Stack, r.Cluster, r.where())
	if r.InSync() {
		fmt.Fprintf(bw, "\n%s\n", tr.paint("1;32", DriftSummaryLine(r)))
		tr.driftWarnings(r)
		return bw.Flush()
	}
	tr.driftItems(r)
	tr.driftWarnings(r)
	fmt.Fprintf(bw, "\n%s\n", tr.paint("1", DriftSummaryLine(r)))
	fmt.Fprintf(bw, "%s\n", driftAdvice(r))
	return bw.Flush()
}

// driftAdvice says what to do about a report's drift.
func driftAdvice(r *DriftReport) string {
	if !r.Fixable() {
		return "Apply cannot fix hardware: repair or relabel the nodes, or change the pool's gpu, driver_version or layout."
	}
	s := fmt.Sprintf("To make the cluster match the configuration, run gpuform drift --fix (or gpuform apply): %d to add, %d to change, %d to destroy.", r.Plan.Add, r.Plan.Change, r.Plan.Destroy)
	if r.Plan.Conflicts > 0 {
		s += fmt.Sprintf(" %d %s in the way and must be removed or adopted first.", r.Plan.Conflicts, pluralWord(r.Plan.Conflicts, "object is", "objects are"))
	}
	if r.Counts()[DriftUnapplied] > 0 {
		s += " Unapplied changes may be waiting for review: check before fixing."
	}
	return s
}

func (t *textRenderer) driftItems(r *DriftReport) {
	counts := r.Counts()
	for _, class := range DriftClasses {
		if counts[class] == 0 {
			continue
		}
		fmt.Fprintf(t.w, "\n%s\n", t.paint("1", fmt.Sprintf("%s: %s (%s)", class, classHeading[class], count(counts[class], "object"))))
		for _, it := range r.Items {
			if it.Class == class {
				t.driftItem(it)
			}
		}
	}
}

func (t *textRenderer) driftItem(it DriftItem) {
	sym := "!"
	if it.Action != "" && it.Action != ActionConflict {
		sym = it.Action.Symbol()
	}
	note := it.Address
	if it.AppliedCommit != "" {
		note += ", applied from " + ShortCommit(it.AppliedCommit)
	}
	fmt.Fprintf(t.w, "  %s %s  %s\n", t.symbol(sym), it.Key(), t.paint("2", "# "+note))
	for _, f := range it.Fields {
		t.field(f, it.Sensitive)
	}
	for _, d := range it.Details {
		fmt.Fprintf(t.w, "      %s\n", d)
	}
}

func (t *textRenderer) driftWarnings(r *DriftReport) {
	for _, w := range r.Warnings {
		fmt.Fprintf(t.w, "\n%s %s\n", t.paint("1;33", "Warning:"), w)
	}
}

// DriftMarker is the hidden first line of the Markdown report; CI jobs
// find the stack (and their issue) by it.
func DriftMarker(stack string) string {
	return fmt.Sprintf("<!-- gpuform:drift stack=%s -->", stack)
}

// RenderDriftMarkdown writes the report as GitHub-flavoured Markdown for an
// issue body: the hidden marker, the summary line, a table of drifted
// objects, then the field differences (in <details> when over 12 lines).
// after, when drift --fix ran, adds the state after the fix.
func RenderDriftMarkdown(w io.Writer, r, after *DriftReport) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n### gpuform drift for stack `%s`\n\n", DriftMarker(r.Stack), r.Stack)
	fmt.Fprintf(bw, "**%s**\n\nCluster `%s`, configuration at %s", DriftSummaryLine(r), mdEscape(r.Cluster), mdEscape(r.where()))
	if !r.CheckedAt.IsZero() {
		fmt.Fprintf(bw, ", checked %s", r.CheckedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(bw, ".\n")
	if len(r.Warnings) > 0 {
		fmt.Fprintf(bw, "\n#### Warnings\n\n")
		for _, warn := range r.Warnings {
			fmt.Fprintf(bw, "- %s\n", mdEscape(warn))
		}
	}
	if !r.InSync() {
		fmt.Fprintf(bw, "\n| Class | Object | Address | Detail |\n|---|---|---|---|\n")
		for _, it := range r.Items {
			fmt.Fprintf(bw, "| %s | %s | `%s` | %s |\n", it.Class, mdEscape(it.Key().String()), it.Address, mdEscape(strings.Join(it.Details, " ")))
		}
		var details strings.Builder
		tr := textRenderer{w: bufio.NewWriter(&details)}
		for _, it := range r.Items {
			if len(it.Fields) > 0 {
				tr.driftItem(DriftItem{Class: it.Class, Address: it.Address, APIVersion: it.APIVersion, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Action: it.Action, AppliedCommit: it.AppliedCommit, Fields: it.Fields, Sensitive: it.Sensitive})
			}
		}
		_ = tr.w.Flush()
		if details.Len() > 0 {
			block := "```diff\n" + strings.ReplaceAll(details.String(), "```", "` ` `") + "```\n"
			if strings.Count(details.String(), "\n") > 12 {
				fmt.Fprintf(bw, "\n<details><summary>Field differences (live → configuration)</summary>\n\n%s\n</details>\n", block)
			} else {
				fmt.Fprintf(bw, "\nField differences (live → configuration):\n\n%s", block)
			}
		}
		fmt.Fprintf(bw, "\n%s\n", mdEscape(driftAdvice(r)))
	}
	if after != nil {
		fmt.Fprintf(bw, "\n#### After `gpuform drift --fix`\n\n**%s**\n", DriftSummaryLine(after))
		for _, it := range after.Items {
			fmt.Fprintf(bw, "- %s: %s (`%s`) %s\n", it.Class, mdEscape(it.Key().String()), it.Address, mdEscape(strings.Join(it.Details, " ")))
		}
	}
	return bw.Flush()
}

// WriteDriftMetrics writes the report as Prometheus text-format gauges for
// node-exporter's textfile collector: drifted objects by class, whether the
// stack is in sync, and when it was checked.
func WriteDriftMetrics(w io.Writer, r *DriftReport) error {
	bw := bufio.NewWriter(w)
	stack := promEscape(r.Stack)
	counts := r.Counts()
	fmt.Fprintf(bw, "# HELP gpuform_drift_objects Objects of the stack that differ from the configuration at the checked git ref, by drift class.\n# TYPE gpuform_drift_objects gauge\n")
	for _, c := range DriftClasses {
		fmt.Fprintf(bw, "gpuform_drift_objects{stack=\"%s\",class=\"%s\"} %d\n", stack, c, counts[c])
	}
	inSync := 0
	if r.InSync() {
		inSync = 1
	}
	fmt.Fprintf(bw, "# HELP gpuform_drift_in_sync 1 when the cluster matches the configuration at the checked git ref, else 0.\n# TYPE gpuform_drift_in_sync gauge\n")
	fmt.Fprintf(bw, "gpuform_drift_in_sync{stack=\"%s\"} %d\n", stack, inSync)
	fmt.Fprintf(bw, "# HELP gpuform_drift_last_check_timestamp_seconds When gpuform drift last read the cluster, in seconds since the epoch.\n# TYPE gpuform_drift_last_check_timestamp_seconds gauge\n")
	fmt.Fprintf(bw, "gpuform_drift_last_check_timestamp_seconds{stack=\"%s\"} %s\n", stack, strconv.FormatFloat(float64(r.CheckedAt.UnixMilli())/1000, 'f', -1, 64))
	return bw.Flush()
}

// promEscape escapes a label value for the Prometheus text format.
func promEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
