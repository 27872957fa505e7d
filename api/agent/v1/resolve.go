package v1

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Resolve maps each GPU index below n that the layout names to its entry,
// as the agent applies it: an entry that turns MIG off may ask for no
// instance, an entry names its GPUs by All or Indexes (not both), and an
// index must exist on the machine (n GPUs).
func (l Layout) Resolve(n int) (map[int]LayoutEntry, error) {
	out := map[int]LayoutEntry{}
	for i, e := range l {
		if !e.Enabled {
			for prof, c := range e.Slices {
				if c != 0 {
					return nil, fmt.Errorf("layout entry %d turns MIG off but asks for %d x %s", i, c, prof)
				}
			}
		}
		switch {
		case e.All && len(e.Indexes) > 0:
			return nil, fmt.Errorf("layout entry %d sets both All and Indexes", i)
		case e.All:
			for j := 0; j < n; j++ {
				out[j] = e
			}
		case len(e.Indexes) > 0:
			for _, j := range e.Indexes {
				if j < 0 || j >= n {
					return nil, fmt.Errorf("layout entry %d names GPU %d, but this machine has %d GPUs", i, j, n)
				}
				out[j] = e
			}
		default:
			return nil, fmt.Errorf("layout entry %d names no GPU (set All or Indexes)", i)
		}
	}
	return out, nil
}

// PlanGPUs decides, for each of n GPUs the layout names, in index order,
// what applying its entry takes (plan), as the agent does before changing
// anything: every GPU that cannot take its entry is an error, all of them
// joined, and then there is no plan.
func PlanGPUs[P any](l Layout, n int, plan func(i int, e LayoutEntry) (P, error)) ([]P, error) {
	targets, err := l.Resolve(n)
	if err != nil {
		return nil, err
	}
	var plans []P
	var errs []error
	for _, i := range slices.Sorted(maps.Keys(targets)) {
		p, err := plan(i, targets[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("GPU %d: %w", i, err))
			continue
		}
		plans = append(plans, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return plans, nil
}
