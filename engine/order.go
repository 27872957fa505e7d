package engine

import (
	"errors"
	"sort"
	"strings"

	"github.com/gpuform/gpuform/engine/dag"
	"github.com/gpuform/gpuform/engine/kinds"
)

// DependencyCycleError is a plan whose changes depend on each other in a
// cycle, so that none of them can be applied first. gpuform never plans
// one; a bug or an edited plan file can make one, and it is refused before
// anything is written.
type DependencyCycleError struct {
	// Cycle lists the objects of the cycle, each depending on the next;
	// the last is the first again.
	Cycle []Key
}

// Error names the objects of the cycle.
func (e *DependencyCycleError) Error() string {
	names := make([]string, len(e.Cycle))
	for i, k := range e.Cycle {
		names[i] = k.String()
	}
	return "the changes depend on each other in a cycle, so none of them can be applied first: " + strings.Join(names, " -> ")
}

// cycleError turns a cycle of the dependency graph over nodes N into a
// DependencyCycleError, naming each node by key; other errors pass.
func cycleError[N comparable](err error, key func(N) Key) error {
	var ce *dag.CycleError[N]
	if !errors.As(err, &ce) {
		return err
	}
	out := &DependencyCycleError{Cycle: make([]Key, len(ce.Cycle))}
	for i, n := range ce.Cycle {
		out.Cycle[i] = key(n)
	}
	return out
}

// dependencies is the dependency graph of changes, in their order: an edge
// from each change to each change of changes it depends on (by key; a key
// two changes share names the last of them).
func dependencies(changes []*Change) *dag.Graph[*Change] {
	g := dag.New[*Change](len(changes))
	byKey := make(map[Key]*Change, len(changes))
	for _, c := range changes {
		g.Add(c)
		byKey[c.Key] = c
	}
	for _, c := range changes {
		for _, d := range c.DependsOn {
			if dc, ok := byKey[d]; ok {
				g.AddEdge(c, dc)
			}
		}
	}
	return g
}

// checkDependencies refuses changes that depend on each other in a cycle.
func checkDependencies(changes []*Change) error {
	_, err := dependencies(changes).Sort()
	return cycleError(err, func(c *Change) Key { return c.Key })
}

// order sorts applies (creates, updates, adoptions, conflicts) so that every
// change comes after the changes it depends on, then appends deletes in
// reverse dependency order (by kind rank from reg: what lives in a
// namespace before the namespace; apply runs deletes rank by rank). Ties
// keep a stable, readable order: by kind rank, then address, then key. A
// dependency cycle is a *DependencyCycleError.
func order(reg *kinds.Registry, applies, deletes []*Change) ([]*Change, error) {
	rank := func(c *Change) int { return reg.Rank(groupKind(c.Key)) }
	sort.SliceStable(applies, func(i, j int) bool {
		a, b := applies[i], applies[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Key.Less(b.Key)
	})
	sorted, err := dependencies(applies).Sort()
	if err != nil {
		return nil, cycleError(err, func(c *Change) Key { return c.Key })
	}
	sort.SliceStable(deletes, func(i, j int) bool {
		ri, rj := rank(deletes[i]), rank(deletes[j])
		if ri != rj {
			return ri > rj
		}
		return deletes[i].Key.Less(deletes[j].Key)
	})
	return append(sorted, deletes...), nil
}

// Ordered returns the desired objects in apply order (the order of a plan
// that creates them all), or a *DependencyCycleError.
func (d *Desired) Ordered() ([]*Object, error) {
	changes := make([]*Change, len(d.Objects))
	byChange := make(map[*Change]*Object, len(d.Objects))
	for i, o := range d.Objects {
		changes[i] = &Change{Address: o.Address, Key: o.Key(), DependsOn: o.DependsOn}
		byChange[changes[i]] = o
	}
	ordered, err := order(d.KindRegistry(), changes, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*Object, len(ordered))
	for i, c := range ordered {
		out[i] = byChange[c]
	}
	return out, nil
}
