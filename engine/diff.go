package engine

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
// show as removed.
func Diff(d *Desired, live *Live, opts DiffOptions) (*Plan, error) {
	if err := missingKinds(d, live); err != nil {
		return nil, err
	}
	p := &Plan{Stack: d.Stack, Source: live.Source, ReadVersions: map[Key]string{}}
	for k, u := range live.Objects {
		p.ReadVersions[k] = ReadVersion(u)
	}
	for k, u := range live.Foreign {
		p.ReadVersions[k] = ReadVersion(u)
	}
	var changes []*Change
	fields := diffObjects(d.Objects, live.Objects)
	for i, o := range d.Objects {
		k := o.Key()
		c := &Change{Address: o.Address, Key: k, APIVersion: o.Object.GetAPIVersion(), After: o.Object, DependsOn: o.DependsOn, Sensitive: o.Sensitive}
		if cur, ok := live.Objects[k]; ok {
			c.Before = cur
			c.Fields = fields[i]
			if len(c.Fields) == 0 {
				p.Summary.Unchanged++
				continue
			}
			c.Action = ActionUpdate
		} else if cur, ok := live.Foreign[k]; ok {
			c.Before = cur
			if opts.Adopt {
				c.Action = ActionAdopt
				c.Fields = diffFields(o.Object.Object, cur, FieldManager)
			} else {
				c.Action = ActionConflict
				c.Reason = fmt.Sprintf("%s already exists and is not managed by this stack (owner: %s); run with --adopt to take it over, or rename it in the configuration", k, Owner(cur))
			}
		} else {
			c.Action = ActionCreate
		}
		changes = append(changes, c)
	}
	nodeChanges, err := diffNodes(d, live, opts)
	if err != nil {
		return nil, err
	}
	for _, n := range live.Nodes {
		p.ReadVersions[KeyOf(n)] = NodeVersion(n)
	}
	changes = append(changes, nodeChanges...)
	policyChanges, warnings, err := diffClusterPolicies(d, live)
	if err != nil {
		return nil, err
	}
	changes = append(changes, policyChanges...)
	p.Warnings = append(p.Warnings, warnings...)
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
	desired := d.index()
	var deletes []*Change
	for k, u := range live.Objects {
		if _, ok := desired[k]; ok || u.GetDeletionTimestamp() != nil {
			continue // wanted, or already being deleted (a terminating Namespace)
		}
		deletes = append(deletes, &Change{
			Address:    u.GetAnnotations()[AnnotAddress],
			Key:        k,
			APIVersion: u.GetAPIVersion(),
			Action:     ActionDelete,
			Before:     u,
		})
	}
	p.Changes = order(changes, deletes)
	for _, c := range p.Changes {
		switch c.Action {
		case ActionCreate:
			p.Summary.Add++
		case ActionUpdate, ActionAdopt:
			p.Summary.Change++
		case ActionDelete:
			p.Summary.Destroy++
		case ActionConflict:
			p.Summary.Conflicts++
		}
	}
	return p, nil
}

// diffObjectsBatch is the fewest objects worth a goroutine of diffObjects.
const diffObjectsBatch = 512

// diffObjects returns diffFields of every desired object against its live
// copy in the stack (nil where there is none), index by index, computed on
// every processor: comparing the fields is most of a large diff's time.
func diffObjects(objs []*Object, live map[Key]*unstructured.Unstructured) [][]FieldDiff {
	out := make([][]FieldDiff, len(objs))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(objs)/diffObjectsBatch))
	per := (len(objs) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(objs); lo += per {
		hi := min(lo+per, len(objs))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if cur, ok := live[objs[i].Key()]; ok {
					out[i] = diffFields(objs[i].Object.Object, cur, FieldManager)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// missingKinds fails when a desired object needs a kind the cluster lacks.
func missingKinds(d *Desired, live *Live) error {
	if len(live.MissingKinds) == 0 {
		return nil
	}
	missing := map[string]Kind{}
	for _, k := range live.MissingKinds {
		missing[k.Group+"/"+k.Kind] = k
	}
	var msgs []string
	seen := map[string]bool{}
	for _, o := range d.Objects {
		gvk := o.Object.GroupVersionKind()
		k, ok := missing[gvk.Group+"/"+gvk.Kind]
		if !ok || seen[o.Address+k.Kind] {
			continue
		}
		seen[o.Address+k.Kind] = true
		msgs = append(msgs, fmt.Sprintf("%s needs %s (%s), which this cluster does not serve: %s", o.Address, k.Kind, k.GroupVersion(), installHint(k)))
	}
	if len(msgs) == 0 {
		return nil
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("... and %d more", len(msgs)-5))
	}
	return &MissingKindError{Messages: msgs}
}

// MissingKindError says which blocks need a CRD the cluster does not have.
type MissingKindError struct{ Messages []string }

func (e *MissingKindError) Error() string {
	return "the cluster lacks API kinds the configuration needs:\n  " + strings.Join(e.Messages, "\n  ")
}

func installHint(k Kind) string {
	switch k.Group {
	case "kueue.x-k8s.io":
		return "install Kueue (https://kueue.sigs.k8s.io) or set scheduler = \"none\" in the gpuform block"
	case "scheduling.volcano.sh":
		return "install Volcano or set scheduler = \"none\" in the gpuform block"
	case "serving.kserve.io":
		return "install KServe (https://kserve.github.io), or remove the model blocks"
	case "nvidia.com":
		return "install the NVIDIA GPU Operator"
	}
	return "install the CRD that serves it"
}
