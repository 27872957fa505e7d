package mig

import (
	"fmt"
	"sort"
	"strings"
)

// Instance is one placed GPU instance.
type Instance struct {
	// Profile is the catalog name of the instance's profile.
	Profile string
	// Placement is the memory slots the instance occupies.
	Placement Placement
}

// Solve finds placements for slices (profile name -> count) on one GPU of
// model g. It returns the instances sorted by placement start, or an *Error
// saying which constraint fails. Zero counts are ignored, and a layout with
// no instances is valid (it returns no instances). Profile names match
// case-insensitively; the instances carry the catalog spelling.
//
// The checks run in this order: the model supports MIG; every profile
// exists; no count is negative; no count is over the profile's maximum; at
// most one media-extension instance; a "+me.all" instance only beside "-me"
// ones; the compute slices fit; an assignment
// of allowed placements exists without overlapping memory slots.
func Solve(g *GPU, slices map[string]int) ([]Instance, error) {
	if g == nil {
		return nil, &Error{Reason: ReasonNotMIGCapable, Message: "no GPU model given for the MIG layout"}
	}
	// Requested profile names in a stable order, zero counts dropped.
	names := make([]string, 0, len(slices))
	for name, n := range slices {
		if n != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	sort.Strings(names)
	counts, err := profileCounts(g, names, slices)
	if err != nil {
		return nil, err
	}
	if err := checkCounts(g, counts); err != nil {
		return nil, err
	}
	return place(g, counts)
}

// profileCounts checks that g has MIG and every requested profile with a
// count that is not negative, and returns the counts per catalog profile, in
// catalog order (names that differ only in case add up). names are the
// requested profiles, sorted.
func profileCounts(g *GPU, names []string, slices map[string]int) ([]int, error) {
	if !g.MIG || len(g.Profiles) == 0 {
		return nil, &Error{
			GPU:     g.Key,
			Reason:  ReasonNotMIGCapable,
			Profile: names[0],
			Message: fmt.Sprintf("%s does not support MIG (time-slicing only), the layout asks for %s",
				g.Key, describeCounts(names, slices)),
		}
	}

	profiles := make(map[string]*Profile, len(names))
	for _, name := range names {
		p, ok := g.Profile(name)
		if !ok {
			return nil, &Error{
				GPU:     g.Key,
				Reason:  ReasonUnknownProfile,
				Profile: name,
				Message: fmt.Sprintf("profile %q is not a MIG profile of %s; valid profiles: %s",
					name, g.Key, strings.Join(g.ProfileNames(), ", ")),
			}
		}
		profiles[name] = p
	}

	for _, name := range names {
		if n := slices[name]; n < 0 {
			return nil, &Error{
				GPU:     g.Key,
				Reason:  ReasonInvalidCount,
				Profile: profiles[name].Name,
				Message: fmt.Sprintf("profile %q has a negative count (%d) on %s", name, n, g.Key),
			}
		}
	}

	counts := make([]int, len(g.Profiles))
	for _, name := range names {
		counts[profileIndex(g, profiles[name])] += slices[name]
	}
	return counts, nil
}

// checkCounts checks counts (per catalog profile of g) against the
// profiles' maximums, the one media-extension instance a GPU has, and its
// compute slices.
func checkCounts(g *GPU, counts []int) error {
	for i, n := range counts {
		p := &g.Profiles[i]
		if n > p.MaxInstances {
			return &Error{
				GPU:     g.Key,
				Reason:  ReasonOverMax,
				Profile: p.Name,
				Message: fmt.Sprintf("profile %q allows at most %d %s on %s, the layout asks for %d",
					p.Name, p.MaxInstances, plural(p.MaxInstances, "instance", "instances"), g.Key, n),
			}
		}
	}

	var meParts []string
	meTotal := 0
	for i, n := range counts {
		if p := &g.Profiles[i]; p.MediaExtensions && n > 0 {
			meTotal += n
			meParts = append(meParts, fmt.Sprintf("%s x%d", p.Name, n))
		}
	}
	if meTotal > 1 {
		return &Error{
			GPU:    g.Key,
			Reason: ReasonMultipleME,
			Message: fmt.Sprintf("at most one media-extension (+me) instance fits on %s, the layout asks for %d (%s)",
				g.Key, meTotal, strings.Join(meParts, ", ")),
		}
	}

	if err := checkAllMedia(g, counts); err != nil {
		return err
	}

	compute := 0
	var computeParts []string
	for i, n := range counts {
		if n > 0 {
			p := &g.Profiles[i]
			compute += n * p.ComputeSlices
			computeParts = append(computeParts, fmt.Sprintf("%s x%d = %d", p.Name, n, n*p.ComputeSlices))
		}
	}
	if compute > g.ComputeSlices {
		return &Error{
			GPU:    g.Key,
			Reason: ReasonComputeExhausted,
			Message: fmt.Sprintf("the layout needs %d compute slices on %s, which has %d (%s)",
				compute, g.Key, g.ComputeSlices, strings.Join(computeParts, ", ")),
		}
	}
	return nil
}

// checkAllMedia refuses a "+me.all" instance beside one that needs a media
// engine: the "+me.all" profiles hold every NVDEC, NVENC and JPEG engine of
// the GPU (4 of each on an RTX PRO 6000, as its full 4g.96gb profile has),
// and every profile but the "-me" ones has at least one (NVIDIA
// Multi-Instance GPU User Guide, table 'GPU Instance Profiles on RTX PRO
// 6000').
func checkAllMedia(g *GPU, counts []int) error {
	all := -1
	for i, n := range counts {
		if n > 0 && g.Profiles[i].Variant == VariantMEAll {
			all = i
		}
	}
	if all < 0 {
		return nil
	}
	for i, n := range counts {
		if p := &g.Profiles[i]; n > 0 && i != all && p.Variant != VariantNoME && p.Variant != VariantMEAll {
			return &Error{
				GPU:     g.Key,
				Reason:  ReasonMediaEngines,
				Profile: p.Name,
				Message: fmt.Sprintf("a %s instance holds every media engine of %s, and %s needs one; only %s profiles share the GPU with it",
					g.Profiles[all].Name, g.Key, p.Name, VariantNoME),
			}
		}
	}
	return nil
}

// profileIndex is the position of p in g.Profiles.
func profileIndex(g *GPU, p *Profile) int {
	for i := range g.Profiles {
		if &g.Profiles[i] == p {
			return i
		}
	}
	panic("mig: profile not in GPU") // unreachable: p comes from g.Profile
}

// slot is one instance to place during the search.
type slot struct {
	profile *Profile
	index   int // position of the profile in the GPU's catalog order
}

// search is the state of the backtracking placement search.
type search struct {
	slots    []slot
	chosen   []int // placement index per slot
	best     int   // most slots placed so far
	bestPick []int // placement indexes of the best partial assignment
}

// place assigns a placement to every instance, or reports memory exhaustion.
func place(g *GPU, counts []int) ([]Instance, error) {
	var s search
	for i, n := range counts {
		for range n {
			s.slots = append(s.slots, slot{profile: &g.Profiles[i], index: i})
		}
	}
	// Largest first, then the most constrained, then catalog order, so that
	// identical instances are adjacent.
	sort.SliceStable(s.slots, func(a, b int) bool {
		pa, pb := s.slots[a].profile, s.slots[b].profile
		if pa.MemorySlices != pb.MemorySlices {
			return pa.MemorySlices > pb.MemorySlices
		}
		if len(pa.Placements) != len(pb.Placements) {
			return len(pa.Placements) < len(pb.Placements)
		}
		return s.slots[a].index < s.slots[b].index
	})
	s.chosen = make([]int, len(s.slots))
	s.best = -1

	if s.solve(0, 0) {
		out := make([]Instance, len(s.slots))
		for i, sl := range s.slots {
			out[i] = Instance{Profile: sl.profile.Name, Placement: sl.profile.Placements[s.chosen[i]]}
		}
		sort.Slice(out, func(a, b int) bool { return out[a].Placement.Start < out[b].Placement.Start })
		return out, nil
	}
	return nil, s.exhausted(g)
}

// solve places slots[i:] given the occupied slots in used; it reports
// whether it succeeded, with the choices in s.chosen.
func (s *search) solve(i int, used uint64) bool {
	if i > s.best {
		s.best = i
		s.bestPick = append(s.bestPick[:0], s.chosen[:i]...)
	}
	if i == len(s.slots) {
		return true
	}
	p := s.slots[i].profile
	first := 0
	// Identical instances take placements in increasing order: the other
	// orders are the same assignment.
	if i > 0 && s.slots[i-1].profile == p {
		first = s.chosen[i-1] + 1
	}
	for k := first; k < len(p.Placements); k++ {
		m := mask(p.Placements[k])
		if used&m != 0 {
			continue
		}
		s.chosen[i] = k
		if s.solve(i+1, used|m) {
			return true
		}
	}
	return false
}

// mask is the bit set of the memory slots a placement occupies.
func mask(pl Placement) uint64 {
	if pl.Size <= 0 {
		return 0
	}
	return ((uint64(1) << pl.Size) - 1) << pl.Start
}

// exhausted builds the memory-exhausted error from the deepest partial
// assignment the search reached.
func (s *search) exhausted(g *GPU) *Error {
	placed := make([]Instance, 0, s.best)
	for i := 0; i < s.best; i++ {
		p := s.slots[i].profile
		placed = append(placed, Instance{Profile: p.Name, Placement: p.Placements[s.bestPick[i]]})
	}
	sort.Slice(placed, func(a, b int) bool { return placed[a].Placement.Start < placed[b].Placement.Start })

	// Unplaced instances, counted per profile in the order they were tried.
	var order []string
	left := map[string]int{}
	for i := s.best; i < len(s.slots); i++ {
		name := s.slots[i].profile.Name
		if left[name] == 0 {
			order = append(order, name)
		}
		left[name]++
	}
	parts := make([]string, len(order))
	for i, name := range order {
		parts[i] = fmt.Sprintf("%s x%d", name, left[name])
	}

	inUse := "no slots are in use"
	if len(placed) > 0 {
		ranges := make([]string, len(placed))
		for i, in := range placed {
			ranges[i] = fmt.Sprintf("%s (%s)", slotRange(in.Placement), in.Profile)
		}
		inUse = "slots " + strings.Join(ranges, ", ") + " are in use"
	}
	return &Error{
		GPU:     g.Key,
		Reason:  ReasonMemoryExhausted,
		Profile: order[0],
		Message: fmt.Sprintf("the layout does not fit the %d memory slots of %s: no free placement for %s while %s",
			g.MemorySlots, g.Key, strings.Join(parts, ", "), inUse),
	}
}

// slotRange formats a placement as "3" or "0-3".
func slotRange(pl Placement) string {
	if pl.Size == 1 {
		return fmt.Sprint(pl.Start)
	}
	return fmt.Sprintf("%d-%d", pl.Start, pl.End()-1)
}

// describeCounts formats the requested counts, e.g. "1g.10gb x2, 3g.40gb x1".
func describeCounts(names []string, slices map[string]int) string {
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s x%d", name, slices[name])
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
