package mig

import (
	"maps"
	"math/bits"
	"slices"
	"sort"
)

// Relayout decides which of a GPU's existing MIG instances to keep and
// where to create the missing ones, so that the GPU ends up with slices
// (profile -> count; sol is Solve's answer for them). known[i] says
// existing[i]'s profile is one of g's catalog profiles; an unknown one is
// never kept. It keeps as many existing instances as a valid placement
// allows, preferring those at the solver's placements; the missing ones go
// to the solver's placements where those are free. From an empty GPU the
// result is exactly sol. keep and destroy are indexes into existing;
// create is sorted by start.
//
// It is the decision of the gpuform agent (providers/nvml) and of the
// simulated cluster's GPUs (providers/sim), which must agree.
func Relayout(g *GPU, slices map[string]int, sol []Instance, existing []Instance, known []bool) (keep, destroy []int, create []Instance) {
	inSol := map[Instance]bool{}
	for _, in := range sol {
		inSol[in] = true
	}
	var cand []int
	for i, in := range existing {
		if known[i] && slices[in.Profile] > 0 && allowed(g, in) && len(cand) < 16 {
			cand = append(cand, i)
		}
	}
	type option struct{ mask, size, matches int }
	opts := make([]option, 0, 1<<len(cand))
	for m := 0; m < 1<<len(cand); m++ {
		o := option{mask: m, size: bits.OnesCount(uint(m))}
		for j, i := range cand {
			if m&(1<<j) != 0 && inSol[existing[i]] {
				o.matches++
			}
		}
		opts = append(opts, o)
	}
	sort.SliceStable(opts, func(i, j int) bool {
		if opts[i].size != opts[j].size {
			return opts[i].size > opts[j].size
		}
		return opts[i].matches > opts[j].matches
	})
	for _, o := range opts {
		kept, occ, ok := keepOption(existing, cand, o.mask, slices)
		if !ok {
			continue
		}
		remaining := map[string]int{}
		maps.Copy(remaining, slices)
		for _, i := range kept {
			remaining[existing[i].Profile]--
		}
		placed, ok := complete(g, occ, remaining, sol)
		if !ok {
			continue
		}
		keptSet := map[int]bool{}
		for _, i := range kept {
			keptSet[i] = true
		}
		for i := range existing {
			if !keptSet[i] {
				destroy = append(destroy, i)
			}
		}
		return kept, destroy, placed
	}
	// Unreachable: the empty option always completes with sol.
	for i := range existing {
		destroy = append(destroy, i)
	}
	return nil, destroy, append([]Instance(nil), sol...)
}

// keepOption checks that the candidates mask selects fit together and
// within slices, and returns them with the memory slots they occupy.
func keepOption(existing []Instance, cand []int, mask int, slices map[string]int) ([]int, uint64, bool) {
	remaining := map[string]int{}
	maps.Copy(remaining, slices)
	var occ uint64
	var kept []int
	for j, i := range cand {
		if mask&(1<<j) == 0 {
			continue
		}
		in := existing[i]
		m := slotMask(in.Placement)
		if remaining[in.Profile] == 0 || occ&m != 0 {
			return nil, 0, false
		}
		remaining[in.Profile]--
		occ |= m
		kept = append(kept, i)
	}
	return kept, occ, true
}

// allowed reports whether in is at a placement the catalog allows for its
// profile.
func allowed(g *GPU, in Instance) bool {
	p, ok := g.Profile(in.Profile)
	if !ok {
		return false
	}
	return slices.Contains(p.Placements, in.Placement)
}

func slotMask(pl Placement) uint64 {
	if pl.Size <= 0 || pl.Start < 0 || pl.Start+pl.Size > 64 {
		return ^uint64(0)
	}
	return ((uint64(1) << pl.Size) - 1) << pl.Start
}

// complete places remaining (profile -> count) on the memory slots free in
// occ, trying the solver's placements of each profile first. It returns the
// placed instances sorted by start.
func complete(g *GPU, occ uint64, remaining map[string]int, sol []Instance) ([]Instance, bool) {
	type item struct {
		prof  *Profile
		cands []Placement
	}
	var names []string
	for name, c := range remaining {
		if c > 0 {
			names = append(names, name)
		}
	}
	profs := map[string]*Profile{}
	for _, name := range names {
		p, ok := g.Profile(name)
		if !ok {
			return nil, false
		}
		profs[name] = p
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := profs[names[i]], profs[names[j]]
		if a.MemorySlices != b.MemorySlices {
			return a.MemorySlices > b.MemorySlices
		}
		return a.Name < b.Name
	})
	var items []item
	for _, name := range names {
		p := profs[name]
		var cands []Placement
		seen := map[Placement]bool{}
		for _, in := range sol {
			if in.Profile == p.Name && !seen[in.Placement] {
				seen[in.Placement] = true
				cands = append(cands, in.Placement)
			}
		}
		for _, pl := range p.Placements {
			if !seen[pl] {
				seen[pl] = true
				cands = append(cands, pl)
			}
		}
		for k := 0; k < remaining[name]; k++ {
			items = append(items, item{prof: p, cands: cands})
		}
	}
	chosen := make([]int, len(items))
	var rec func(i int, occ uint64) bool
	rec = func(i int, occ uint64) bool {
		if i == len(items) {
			return true
		}
		from := 0
		if i > 0 && items[i-1].prof == items[i].prof {
			from = chosen[i-1] + 1 // identical instances: one order only
		}
		for c := from; c < len(items[i].cands); c++ {
			m := slotMask(items[i].cands[c])
			if occ&m != 0 {
				continue
			}
			chosen[i] = c
			if rec(i+1, occ|m) {
				return true
			}
		}
		return false
	}
	if !rec(0, occ) {
		return nil, false
	}
	out := make([]Instance, len(items))
	for i, it := range items {
		out[i] = Instance{Profile: it.prof.Name, Placement: it.cands[chosen[i]]}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Placement.Start < out[j].Placement.Start })
	return out, true
}
