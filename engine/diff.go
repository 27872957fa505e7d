package engine

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine/kinds"
)

// DiffOptions tune Diff.
type DiffOptions struct {
	// Adopt plans to take over unmanaged objects in the way instead of
	// reporting them as conflicts.
	Adopt bool
}

// Diff compares the desired state with the live one and returns the ordered
// plan. Only fields gpuform sets are compared, so server defaults never show
// as changes; fields gpuform set before (managedFields) and no longer sets
// show as removed. The plan is ordered by d's registry of kinds; changes
// that depend on each other in a cycle are a *DependencyCycleError.
func Diff(d *Desired, live *Live, opts DiffOptions) (*Plan, error) {
	reg := d.KindRegistry()
	if len(live.Settled) > 0 && live.SettledFor != d {
		return nil, fmt.Errorf("the live objects were settled against another desired state of stack %s than the one diffed", d.Stack)
	}
	if err := missingKinds(reg, d, live); err != nil {
		return nil, err
	}
	p := &Plan{Stack: d.Stack, Source: live.Source}
	p.Policies, p.PoliciesBoundAlike = StackPolicies(d)
	// The versions read, one per live object, are gathered on another core
	// while the objects are diffed (both only read live).
	versions := make(chan map[Key]string, 1) // never blocks: read unless Diff fails
	go func() {
		v := make(map[Key]string, len(live.Objects)+len(live.Foreign)+len(live.Nodes)+len(live.ClusterPolicies))
		for k, u := range live.Objects {
			v[k] = ReadVersion(u)
		}
		for k, u := range live.Foreign {
			v[k] = ReadVersion(u)
		}
		versions <- v
	}()
	changes := diffDesired(d, live, opts, &p.Summary)
	nodeChanges, err := DiffNodes(d, live, opts)
	if err != nil {
		return nil, err
	}
	p.ReadVersions = <-versions
	for _, n := range live.Nodes {
		p.ReadVersions[KeyOf(n)] = NodeVersion(n)
	}
	changes = append(changes, nodeChanges...)
	policyChanges, warnings, err := DiffClusterPolicies(d, live)
	if err != nil {
		return nil, err
	}
	changes = append(changes, policyChanges...)
	p.Warnings = append(p.Warnings, warnings...)
	p.Warnings = append(p.Warnings, DriverPinWarnings(d, live)...)
	for _, cp := range live.ClusterPolicies {
		p.ReadVersions[KeyOf(cp)] = cp.GetResourceVersion()
	}
	waitForNodes(changes, d)
	p.Throttles = map[string]int{}
	for _, np := range d.Pools {
		if np.MaxUnavailable > 0 {
			p.Throttles[np.Address] = np.MaxUnavailable
		}
	}
	queuesShrinkFirst(d, changes)
	deletes, notes := prunes(d, live)
	p.Warnings = append(p.Warnings, notes...)
	p.Migrate = migrate(d, live)
	if p.Changes, err = order(reg, changes, deletes); err != nil {
		return nil, fmt.Errorf("order the plan: %w", err)
	}
	p.Summary.count(p.Changes)
	return p, nil
}

// diffDesired returns the change of every desired object that differs from
// its live copy (an update), has none (a create), or meets an object of
// another owner (an adoption with opts.Adopt, else a conflict), counting
// the unchanged ones in s.
func diffDesired(d *Desired, live *Live, opts DiffOptions, s *Summary) []*Change {
	var changes []*Change
	reg := d.KindRegistry()
	fields := diffObjects(reg, d.Objects, live)
	for i, o := range d.Objects {
		k := o.Key()
		if live.Settled[k] && (live.Inventory == nil || live.Inventory.has(k, live.Objects[k])) {
			// The common case, with nothing to allocate: the refresh
			// settles only objects outside the lock's namespace that
			// Owned's rule gives the stack; the record has the last word.
			s.Unchanged++
			continue
		}
		cur, labelled := live.Objects[k]
		owned := labelled && live.Owns(k, cur, d.Stack)
		if owned && len(fields[i]) == 0 {
			s.Unchanged++
			continue
		}
		c := &Change{Address: o.Address, Key: k, APIVersion: o.Object.GetAPIVersion(), After: o.Object, DependsOn: o.DependsOn, Sensitive: o.Sensitive}
		switch {
		case IsLockNamespace(k):
			// Never created or taken over, --adopt or not (compile.Validate
			// refuses a tenant there; this holds for any Desired).
			c.Action, c.Before = ActionConflict, cur
			c.Reason = fmt.Sprintf("%s is the namespace of gpuform's lock, which no stack may own; choose another namespace", k)
		case owned:
			c.Before = cur
			c.Fields = fields[i]
			c.Action = ActionUpdate
		case labelled:
			// The stack's label, but not the stack's (see Live.Owns):
			// someone else's object, in the way like a foreign one.
			inTheWay(reg, c, o, cur, opts, notOursReason(k, cur, live, d.Stack))
		case live.Foreign[k] != nil && live.Owns(k, live.Foreign[k], d.Stack):
			// Imported (gpuform import): recorded with its UID, not yet
			// written with the stack's marks. Its first apply takes it over.
			c.Before = live.Foreign[k]
			c.Fields = DiffOwned(reg, o.Object.Object, c.Before)
			c.Action = ActionUpdate
		case live.Foreign[k] != nil:
			cur = live.Foreign[k]
			inTheWay(reg, c, o, cur, opts, fmt.Sprintf("%s already exists and is not managed by this stack (owner: %s); run with --adopt to take it over, or rename it in the configuration", k, Owner(cur)))
		default:
			c.Action = ActionCreate
		}
		changes = append(changes, c)
	}
	return changes
}

// inTheWay makes c the adoption (with opts.Adopt) or the conflict of the
// desired object o over cur, an object the stack does not own; reason says
// why, for a conflict; reg says which kinds are owned whole.
func inTheWay(reg *kinds.Registry, c *Change, o *Object, cur *unstructured.Unstructured, opts DiffOptions, reason string) {
	c.Before = cur
	if opts.Adopt {
		c.Action = ActionAdopt
		c.Fields = DiffOwned(reg, o.Object.Object, cur)
		return
	}
	c.Action = ActionConflict
	c.Reason = reason
}

// prunes returns a delete for every object of the stack the configuration
// no longer has, unless its deletion has begun (a terminating Namespace),
// and a warning for every object with the stack's label that the stack does
// not own (Live.Owns: its record holds it with its UID), which is left in
// place: a label or field manager anyone who may write the object may set
// is no reason to delete, and the lock's namespace is never deleted. A
// stack without a record yet (last applied by a gpuform that kept none)
// deletes nothing: what it would prune is reported, and the first apply
// records the desired objects (Plan.Migrate).
func prunes(d *Desired, live *Live) ([]*Change, hcl.Diagnostics) {
	var desired map[Key]*Object // built once an object not settled needs it
	var deletes []*Change
	var notes hcl.Diagnostics
	for k, u := range live.Objects {
		if live.Settled[k] {
			continue // settled against d's object of the same key (Diff checks SettledFor)
		}
		if desired == nil {
			desired = d.index()
		}
		if _, ok := desired[k]; ok || u.GetDeletionTimestamp() != nil {
			continue
		}
		if !live.Owns(k, u, d.Stack) || live.Inventory == nil {
			notes = append(notes, Warning(unmanagedWarning(k, u, live, d.Stack), ""))
			continue
		}
		deletes = append(deletes, &Change{
			Address:    live.AppliedAddress(k, u),
			Key:        k,
			APIVersion: u.GetAPIVersion(),
			Action:     ActionDelete,
			Before:     u,
		})
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Summary < notes[j].Summary })
	return deletes, notes
}

// migrate returns the keys of d's objects that Owned's rule gives the
// stack in live, when live has no record yet (nil otherwise): what the
// first apply records besides what it writes itself.
func migrate(d *Desired, live *Live) []Key {
	if live.Inventory != nil {
		return nil
	}
	var out []Key
	for _, o := range d.Objects {
		k := o.Key()
		if u := live.Objects[k]; u != nil && !IsLockNamespace(k) && Owned(u, d.Stack) {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// count adds the changes to the summary, by action.
func (s *Summary) count(changes []*Change) {
	for _, c := range changes {
		switch c.Action {
		case ActionCreate:
			s.Add++
		case ActionUpdate, ActionAdopt:
			s.Change++
		case ActionDelete:
			s.Destroy++
		case ActionConflict:
			s.Conflicts++
		}
	}
}

// diffObjectsBatch is the fewest objects worth a goroutine of diffObjects.
const diffObjectsBatch = 512

// diffObjects returns DiffOwned (reg says which kinds are owned whole) of
// every desired object against its live copy in the stack (nil where there is none, or where the refresh settled
// it: found no difference already), index by index, computed on every
// processor: comparing the fields is most of a large diff's time.
func diffObjects(reg *kinds.Registry, objs []*Object, live *Live) [][]FieldDiff {
	out := make([][]FieldDiff, len(objs))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(objs)/diffObjectsBatch))
	per := (len(objs) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(objs); lo += per {
		hi := min(lo+per, len(objs))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				k := objs[i].Key()
				if cur, ok := live.Objects[k]; ok && !live.Settled[k] {
					out[i] = DiffOwned(reg, objs[i].Object.Object, cur)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// missingKinds fails when a desired object needs a kind the cluster lacks,
// saying what to install (from reg).
func missingKinds(reg *kinds.Registry, d *Desired, live *Live) error {
	if len(live.MissingKinds) == 0 {
		return nil
	}
	missing := map[schema.GroupKind]Kind{}
	for _, k := range live.MissingKinds {
		missing[k.GroupKind()] = k
	}
	var msgs []string
	seen := map[string]bool{}
	for _, o := range d.Objects {
		key := o.Key() // cached: no apiVersion to parse per object
		k, ok := missing[schema.GroupKind{Group: key.Group, Kind: key.Kind}]
		if !ok || seen[o.Address+k.Kind] {
			continue
		}
		seen[o.Address+k.Kind] = true
		if vs := live.ServedVersions[k.GroupKind()]; len(vs) > 0 {
			gvs := make([]string, len(vs))
			for i, v := range vs {
				gvs[i] = schema.GroupVersion{Group: k.Group, Version: v}.String()
			}
			msgs = append(msgs, fmt.Sprintf("%s needs %s (%s), but this cluster serves %s only at %s: %s", o.Address, k.Kind, k.GroupVersion(), k.Kind, strings.Join(gvs, ", "), reg.UpgradeHint(k)))
			continue
		}
		msgs = append(msgs, fmt.Sprintf("%s needs %s (%s), which this cluster does not serve: %s", o.Address, k.Kind, k.GroupVersion(), reg.InstallHint(k.GroupKind())))
	}
	if len(msgs) == 0 {
		return nil
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("... and %d more", len(msgs)-5))
	}
	return &MissingKindError{Messages: msgs}
}

// MissingKindError says which blocks need a CRD the cluster does not have,
// or has only at an older version.
type MissingKindError struct{ Messages []string }

// Error lists the blocks and the kinds they need.
func (e *MissingKindError) Error() string {
	return "the cluster lacks API kinds the configuration needs:\n  " + strings.Join(e.Messages, "\n  ")
}
