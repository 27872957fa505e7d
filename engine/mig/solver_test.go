package mig

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkPlacement fails the test unless instances are a valid placement of
// the layout slices (canonical profile names) on g.
func checkPlacement(t testing.TB, g *GPU, slices map[string]int, instances []Instance) {
	t.Helper()
	if err := placementError(g, slices, instances); err != nil {
		t.Fatalf("%s %v: invalid placement %v: %v", g.Key, slices, instances, err)
	}
}

// placementError says what is wrong with a placement, independently of the
// solver.
func placementError(g *GPU, layout map[string]int, instances []Instance) error {
	got := map[string]int{}
	used := make([]string, g.MemorySlots)
	compute, me := 0, 0
	for i, in := range instances {
		if i > 0 && instances[i-1].Placement.Start >= in.Placement.Start {
			return fmt.Errorf("instances not sorted by start")
		}
		p, ok := g.Profile(in.Profile)
		if !ok || p.Name != in.Profile {
			return fmt.Errorf("instance of unknown profile %q", in.Profile)
		}
		if !slices.Contains(p.Placements, in.Placement) {
			return fmt.Errorf("%s at %+v is not an allowed placement", in.Profile, in.Placement)
		}
		for s := in.Placement.Start; s < in.Placement.Start+in.Placement.Size; s++ {
			if s < 0 || s >= g.MemorySlots {
				return fmt.Errorf("%s at %+v is outside the GPU", in.Profile, in.Placement)
			}
			if used[s] != "" {
				return fmt.Errorf("slot %d used by %s and %s", s, used[s], in.Profile)
			}
			used[s] = in.Profile
		}
		got[in.Profile]++
		compute += p.ComputeSlices
		if p.MediaExtensions {
			me++
		}
	}
	want := map[string]int{}
	for name, n := range layout {
		if n != 0 {
			want[name] = n
		}
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("instance counts %v, want %v", got, want)
	}
	if compute > g.ComputeSlices {
		return fmt.Errorf("%d compute slices used, GPU has %d", compute, g.ComputeSlices)
	}
	if me > 1 {
		return fmt.Errorf("%d +me instances", me)
	}
	return nil
}

// reasonOf returns the Reason of err, "" for nil; it fails on other errors.
func reasonOf(t testing.TB, err error) Reason {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Message == "" || e.Error() != e.Message {
		t.Fatalf("error %+v: empty message or Error() differs", e)
	}
	return e.Reason
}

func TestSolveEveryProfileAtMax(t *testing.T) {
	for _, g := range migGPUs() {
		for _, p := range g.Profiles {
			t.Run(g.Key+"/"+p.Name, func(t *testing.T) {
				layout := map[string]int{p.Name: p.MaxInstances}
				got, err := Solve(g, layout)
				if err != nil {
					t.Fatalf("Solve(%v) = %v", layout, err)
				}
				checkPlacement(t, g, layout, got)

				layout[p.Name] = p.MaxInstances + 1
				_, err = Solve(g, layout)
				if r := reasonOf(t, err); r != ReasonOverMax {
					t.Fatalf("Solve(%v) reason = %q, want %q", layout, r, ReasonOverMax)
				}
				var e *Error
				errors.As(err, &e)
				if e.Profile != p.Name || e.GPU != g.Key {
					t.Errorf("error names profile %q on %q, want %q on %q", e.Profile, e.GPU, p.Name, g.Key)
				}
			})
		}
	}
}

// TestSolveEightSlotShapes runs the same layouts, by profile position, on
// every GPU with 8 memory slots: position 0 is the small 1g profile, 1 its
// +me variant, 2 the large 1g, 3 the 2g, 4 the 3g, 5 the 4g, 6 the 7g.
func TestSolveEightSlotShapes(t *testing.T) {
	tests := []struct {
		name   string
		counts map[int]int
		want   Reason
	}{
		{"balanced", map[int]int{0: 2, 3: 1, 4: 1}, ""},
		{"full", map[int]int{6: 1}, ""},
		{"4g+3g", map[int]int{5: 1, 4: 1}, ""},
		{"me+six small", map[int]int{1: 1, 0: 6}, ""},
		{"me+three 2g", map[int]int{1: 1, 3: 3}, ""},
		{"three large 1g+one 2g", map[int]int{2: 3, 3: 1}, ""},
		{"3g+two 2g", map[int]int{4: 1, 3: 2}, ""},
		{"4g+two large 1g", map[int]int{5: 1, 2: 2}, ""},
		{"three 2g+large 1g", map[int]int{3: 3, 2: 1}, ""},
		{"two 3g+small", map[int]int{4: 2, 0: 1}, ReasonMemoryExhausted},
		{"four large 1g+small", map[int]int{2: 4, 0: 1}, ReasonMemoryExhausted},
		{"four large 1g+me", map[int]int{2: 4, 1: 1}, ReasonMemoryExhausted},
		{"3g+2g+two large 1g", map[int]int{4: 1, 3: 1, 2: 2}, ReasonMemoryExhausted},
		{"4g+two large 1g+small", map[int]int{5: 1, 2: 2, 0: 1}, ReasonMemoryExhausted},
		{"4g+2g+two small", map[int]int{5: 1, 3: 1, 0: 2}, ReasonComputeExhausted},
		{"7g+small", map[int]int{6: 1, 0: 1}, ReasonComputeExhausted},
		{"two 3g+2g", map[int]int{4: 2, 3: 1}, ReasonComputeExhausted},
		{"two me", map[int]int{1: 2}, ReasonOverMax},
		{"eight small", map[int]int{0: 8}, ReasonOverMax},
		{"negative", map[int]int{0: 1, 3: -1}, ReasonInvalidCount},
		{"zero counts", map[int]int{0: 0, 6: 0}, ""},
	}
	for _, g := range migGPUs() {
		if g.MemorySlots != 8 {
			continue
		}
		for _, tt := range tests {
			t.Run(g.Key+"/"+tt.name, func(t *testing.T) {
				layout := map[string]int{}
				for i, n := range tt.counts {
					layout[g.Profiles[i].Name] = n
				}
				got, err := Solve(g, layout)
				if r := reasonOf(t, err); r != tt.want {
					t.Fatalf("Solve(%v) reason = %q (%v), want %q", layout, r, err, tt.want)
				}
				if err == nil {
					checkPlacement(t, g, layout, got)
				}
			})
		}
	}
}

func TestSolveLayouts(t *testing.T) {
	tests := []struct {
		gpu     string
		layout  map[string]int
		want    Reason
		profile string // expected Error.Profile, when checked
	}{
		// A30-24GB
		{"A30-24GB", map[string]int{"1g.6gb": 2, "2g.12gb": 1}, "", ""},
		{"A30-24GB", map[string]int{"1g.6gb+me": 1, "1g.6gb": 3}, "", ""},
		{"A30-24GB", map[string]int{"2g.12gb+me": 1, "2g.12gb": 1}, "", ""},
		{"A30-24GB", map[string]int{"2g.12gb+me": 1, "1g.6gb": 2}, "", ""},
		{"A30-24GB", map[string]int{"1g.6gb+me": 1, "2g.12gb+me": 1}, ReasonMultipleME, ""},
		{"A30-24GB", map[string]int{"4g.24gb": 1, "1g.6gb": 1}, ReasonComputeExhausted, ""},
		{"A30-24GB", map[string]int{"2g.12gb": 2, "1g.6gb": 1}, ReasonComputeExhausted, ""},
		{"A30-24GB", map[string]int{"1g.6gb": 5}, ReasonOverMax, "1g.6gb"},
		{"A30-24GB", map[string]int{"2g.12gb+me": 2}, ReasonOverMax, "2g.12gb+me"},
		{"A30-24GB", map[string]int{"1g.10gb": 1}, ReasonUnknownProfile, "1g.10gb"},
		{"A30-24GB", map[string]int{"1g.6gb": -1}, ReasonInvalidCount, "1g.6gb"},
		// RTX-PRO-6000-96GB: 4 slots, +gfx, -me and +me.all profiles.
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb": 2, "2g.48gb": 1}, "", ""},
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb+gfx": 2, "2g.48gb+gfx": 1}, "", ""},
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb+me.all": 1, "1g.24gb-me": 3}, "", ""},
		{"RTX-PRO-6000-96GB", map[string]int{"2g.48gb+me.all": 1, "2g.48gb-me": 1}, "", ""},
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb+me.all": 1, "1g.24gb": 1}, ReasonMediaEngines, "1g.24gb"},
		{"RTX-PRO-6000-96GB", map[string]int{"2g.48gb+me.all": 1, "1g.24gb+gfx": 2}, ReasonMediaEngines, "1g.24gb+gfx"},
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb+me.all": 1, "1g.24gb+me": 1}, ReasonMultipleME, ""},
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb+me": 1, "1g.24gb": 3}, "", ""},
		{"RTX-PRO-6000-96GB", map[string]int{"4g.96gb+gfx": 1, "1g.24gb-me": 1}, ReasonComputeExhausted, ""},
		{"RTX-PRO-6000-96GB", map[string]int{"2g.48gb": 1, "1g.24gb": 1, "1g.24gb-me": 1}, "", ""},
		{"RTX-PRO-6000-96GB", map[string]int{"1g.24gb+gfx": 5}, ReasonOverMax, "1g.24gb+gfx"},
		// GB200-186GB
		{"GB200-186GB", map[string]int{"1g.23gb": 2, "2g.47gb": 1, "3g.93gb": 1}, "", ""},
		{"GB200-186GB", map[string]int{"3g.93gb": 2, "1g.23gb": 1}, ReasonMemoryExhausted, "1g.23gb"},
		// A100-40GB
		{"A100-40GB", map[string]int{"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}, "", ""},
		{"A100-40GB", map[string]int{"1g.10gb": 3, "2g.10gb": 1}, "", ""},
		{"A100-40GB", map[string]int{"2g.10gb": 3, "1g.5gb+me": 1}, "", ""},
		{"A100-40GB", map[string]int{"3g.20gb": 2, "1g.5gb": 1}, ReasonMemoryExhausted, "1g.5gb"},
		{"A100-40GB", map[string]int{"1g.10gb": 4, "1g.5gb": 1}, ReasonMemoryExhausted, "1g.5gb"},
		{"A100-40GB", map[string]int{"4g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}, ReasonComputeExhausted, ""},
		{"A100-40GB", map[string]int{"7g.80gb": 1}, ReasonUnknownProfile, "7g.80gb"},
		// A100-80GB
		{"A100-80GB", map[string]int{"3g.40gb": 2, "1g.10gb": 1}, ReasonMemoryExhausted, "1g.10gb"},
		{"A100-80GB", map[string]int{"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, ReasonComputeExhausted, ""},
		{"A100-80GB", map[string]int{"1g.10gb+me": 1, "1g.10gb": 6}, "", ""},
		{"A100-80GB", map[string]int{"1g.10gb+me": 1, "1g.20gb": 4}, ReasonMemoryExhausted, "1g.10gb+me"},
		{"A100-80GB", map[string]int{"1g.5gb": 1}, ReasonUnknownProfile, "1g.5gb"},
		{"A100-80GB", map[string]int{"1g.10gb": 8}, ReasonOverMax, "1g.10gb"},
		{"A100-80GB", map[string]int{"1G.10GB": 4, "1g.10gb": 4}, ReasonOverMax, "1g.10gb"},
		{"A100-80GB", map[string]int{"1G.10GB": 3, "1g.10gb": 4}, "", ""},
		{"A100-80GB", map[string]int{}, "", ""},
		{"A100-80GB", nil, "", ""},
		// Order of checks: unknown before negative before over-max before
		// +me before compute.
		{"A100-80GB", map[string]int{"1g.10gb": -1, "bogus": 1}, ReasonUnknownProfile, "bogus"},
		{"A100-80GB", map[string]int{"1g.10gb": 9, "2g.20gb": -2}, ReasonInvalidCount, "2g.20gb"},
		{"A30-24GB", map[string]int{"1g.6gb+me": 1, "2g.12gb+me": 1, "4g.24gb": 2}, ReasonOverMax, "4g.24gb"},
		{"A30-24GB", map[string]int{"1g.6gb+me": 1, "2g.12gb+me": 1, "4g.24gb": 1}, ReasonMultipleME, ""},
		// H100-80GB, H100-94GB, H200-141GB, B200-180GB
		{"H100-80GB", map[string]int{"3g.40gb": 1, "2g.20gb": 2}, "", ""},
		{"H100-80GB", map[string]int{"1g.20gb": 4, "1g.10gb": 1}, ReasonMemoryExhausted, "1g.10gb"},
		{"H100-94GB", map[string]int{"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}, "", ""},
		{"H100-94GB", map[string]int{"1g.10gb": 1}, ReasonUnknownProfile, "1g.10gb"},
		{"H200-141GB", map[string]int{"4g.71gb": 1, "3g.71gb": 1}, "", ""},
		{"H200-141GB", map[string]int{"7g.141gb": 1, "1g.18gb+me": 1}, ReasonComputeExhausted, ""},
		{"B200-180GB", map[string]int{"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}, "", ""},
		{"B200-180GB", map[string]int{"3g.90gb": 2, "1g.23gb+me": 1}, ReasonMemoryExhausted, "1g.23gb+me"},
		// No MIG.
		{"L40S", map[string]int{"1g.10gb": 1}, ReasonNotMIGCapable, ""},
		{"L4", map[string]int{"1g.6gb": 2}, ReasonNotMIGCapable, ""},
		{"T4", map[string]int{}, "", ""},
		{"T4", map[string]int{"1g.5gb": 0}, "", ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.gpu, tt.layout), func(t *testing.T) {
			g := mustLookup(t, tt.gpu)
			got, err := Solve(g, tt.layout)
			if r := reasonOf(t, err); r != tt.want {
				t.Fatalf("Solve(%v) reason = %q (%v), want %q", tt.layout, r, err, tt.want)
			}
			if err != nil {
				var e *Error
				errors.As(err, &e)
				if e.GPU != g.Key {
					t.Errorf("Error.GPU = %q, want %q", e.GPU, g.Key)
				}
				if tt.profile != "" && e.Profile != tt.profile {
					t.Errorf("Error.Profile = %q, want %q (%v)", e.Profile, tt.profile, err)
				}
				if got != nil {
					t.Errorf("instances %v returned with an error", got)
				}
				return
			}
			canonical := map[string]int{}
			for name, n := range tt.layout {
				p, _ := g.Profile(name)
				if n != 0 {
					canonical[p.Name] += n
				}
			}
			checkPlacement(t, g, canonical, got)
		})
	}
}

func TestSolveMessages(t *testing.T) {
	tests := []struct {
		gpu    string
		layout map[string]int
		want   []string // substrings of the message
	}{
		{"A100-80GB", map[string]int{"1g.10gb": 8},
			[]string{`profile "1g.10gb" allows at most 7 instances on A100-80GB, the layout asks for 8`}},
		{"A100-80GB", map[string]int{"7g.80gb": 2},
			[]string{`profile "7g.80gb" allows at most 1 instance on A100-80GB, the layout asks for 2`}},
		{"A100-80GB", map[string]int{"1g.5gb": 1},
			[]string{`"1g.5gb"`, "A100-80GB", "1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"}},
		{"A100-80GB", map[string]int{"3g.40gb": 2, "1g.10gb": 1},
			[]string{"8 memory slots of A100-80GB", "no free placement for 1g.10gb x1", "slots 0-3 (3g.40gb), 4-7 (3g.40gb) are in use"}},
		{"A100-80GB", map[string]int{"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2},
			[]string{"needs 8 compute slices on A100-80GB, which has 7", "4g.40gb x1 = 4", "2g.20gb x1 = 2", "1g.10gb x2 = 2"}},
		{"A30-24GB", map[string]int{"1g.6gb+me": 1, "2g.12gb+me": 1},
			[]string{"at most one media-extension", "A30-24GB", "asks for 2", "1g.6gb+me x1", "2g.12gb+me x1"}},
		{"L40S", map[string]int{"1g.10gb": 1},
			[]string{"L40S does not support MIG", "1g.10gb x1"}},
		{"A100-80GB", map[string]int{"2g.20gb": -1},
			[]string{`"2g.20gb"`, "negative", "-1", "A100-80GB"}},
	}
	for _, tt := range tests {
		_, err := Solve(mustLookup(t, tt.gpu), tt.layout)
		if err == nil {
			t.Errorf("%s %v: no error", tt.gpu, tt.layout)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: message %q lacks %q", tt.gpu, tt.layout, err.Error(), w)
			}
		}
	}
}

func TestSolveDeterministic(t *testing.T) {
	g := mustLookup(t, "A100-80GB")
	layout := map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
	first, err := Solve(g, layout)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := Solve(g, layout)
		if err != nil || !slices.Equal(first, again) {
			t.Fatalf("Solve gave %v then %v (%v)", first, again, err)
		}
	}
}

func TestSolveNilGPU(t *testing.T) {
	if _, err := Solve(nil, map[string]int{"1g.10gb": 1}); reasonOf(t, err) != ReasonNotMIGCapable {
		t.Fatalf("Solve(nil) = %v", err)
	}
}

// bruteForceFits reports whether the instances in counts (catalog profile
// index -> count) have non-overlapping allowed placements, trying every
// placement of every instance in catalog order, with no pruning beyond
// overlap.
func bruteForceFits(g *GPU, counts map[int]int) bool {
	var items []*Profile
	for i := range g.Profiles {
		for range counts[i] {
			items = append(items, &g.Profiles[i])
		}
	}
	used := make([]bool, g.MemorySlots)
	var try func(k int) bool
	try = func(k int) bool {
		if k == len(items) {
			return true
		}
		for _, pl := range items[k].Placements {
			free := true
			for s := pl.Start; s < pl.Start+pl.Size; s++ {
				if used[s] {
					free = false
				}
			}
			if !free {
				continue
			}
			for s := pl.Start; s < pl.Start+pl.Size; s++ {
				used[s] = true
			}
			ok := try(k + 1)
			for s := pl.Start; s < pl.Start+pl.Size; s++ {
				used[s] = false
			}
			if ok {
				return true
			}
		}
		return false
	}
	return try(0)
}

// oracle computes the expected Reason of a layout from first principles.
func oracle(g *GPU, counts map[int]int) Reason {
	for _, n := range counts {
		if n < 0 {
			return ReasonInvalidCount
		}
	}
	for i, n := range counts {
		if n > g.Profiles[i].MaxInstances {
			return ReasonOverMax
		}
	}
	me, compute := 0, 0
	for i, n := range counts {
		if g.Profiles[i].MediaExtensions {
			me += n
		}
		compute += n * g.Profiles[i].ComputeSlices
	}
	if me > 1 {
		return ReasonMultipleME
	}
	allMedia, needsMedia := false, false
	for i, n := range counts {
		if n > 0 {
			v := g.Profiles[i].Variant
			allMedia = allMedia || v == VariantMEAll
			needsMedia = needsMedia || v != VariantMEAll && v != VariantNoME
		}
	}
	if allMedia && needsMedia {
		return ReasonMediaEngines
	}
	if compute > g.ComputeSlices {
		return ReasonComputeExhausted
	}
	if !bruteForceFits(g, counts) {
		return ReasonMemoryExhausted
	}
	return ""
}

func TestSolveProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(20240601, 7))
	seen := map[Reason]int{}
	for _, g := range migGPUs() {
		for iter := range 600 {
			counts := map[int]int{}
			if iter%3 == 0 {
				// Any counts, sometimes over the max or negative.
				for range 1 + rng.IntN(4) {
					i := rng.IntN(len(g.Profiles))
					counts[i] = rng.IntN(g.Profiles[i].MaxInstances+2) - boolInt(rng.IntN(40) == 0)
				}
			} else {
				// Add instances until a random compute budget is spent, so
				// most layouts reach the placement search.
				budget := 1 + rng.IntN(g.ComputeSlices)
				for used := 0; used < budget; {
					i := rng.IntN(len(g.Profiles))
					counts[i]++
					used += g.Profiles[i].ComputeSlices
				}
			}
			layout := map[string]int{}
			for i, n := range counts {
				layout[g.Profiles[i].Name] = n
			}

			want := oracle(g, counts)
			got, err := Solve(g, layout)
			r := reasonOf(t, err)
			seen[r]++
			if r != want {
				t.Fatalf("%s Solve(%v) reason %q (%v), brute force says %q", g.Key, layout, r, err, want)
			}
			if err == nil {
				checkPlacement(t, g, layout, got)
			}
		}
	}
	// The property is only worth something if both outcomes occurred.
	for _, r := range []Reason{"", ReasonMemoryExhausted, ReasonComputeExhausted, ReasonOverMax} {
		if seen[r] < 10 {
			t.Errorf("only %d random layouts with reason %q: %v", seen[r], r, seen)
		}
	}
	t.Logf("outcomes: %v", seen)
}

func boolInt(b bool) int {
	if b {
		return 2
	}
	return 0
}

func BenchmarkSolve(b *testing.B) {
	c := Default()
	cases := []struct {
		gpu    string
		layout map[string]int
	}{
		{"A100-80GB", map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
		{"H100-80GB", map[string]int{"1g.10gb": 7}},
		{"H200-141GB", map[string]int{"1g.18gb+me": 1, "1g.18gb": 6}},
		{"A100-80GB", map[string]int{"3g.40gb": 2, "1g.10gb": 1}},                // memory exhausted
		{"B200-180GB", map[string]int{"1g.45gb": 3, "1g.23gb": 3, "2g.45gb": 0}}, // memory exhausted, deep
		{"A30-24GB", map[string]int{"1g.6gb": 2, "2g.12gb": 1}},
	}
	gpus := make([]*GPU, len(cases))
	for i, tc := range cases {
		gpus[i], _ = c.Lookup(tc.gpu)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % len(cases)
		_, _ = Solve(gpus[k], cases[k].layout)
	}
}
