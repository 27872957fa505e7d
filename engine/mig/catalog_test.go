package mig

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func mustLookup(t testing.TB, name string) *GPU {
	t.Helper()
	g, ok := Default().Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q) found nothing", name)
	}
	return g
}

func migGPUs() []*GPU {
	var out []*GPU
	for _, g := range Default().GPUs() {
		if g.MIG {
			out = append(out, g)
		}
	}
	return out
}

func TestGPUsOrder(t *testing.T) {
	var keys []string
	for _, g := range Default().GPUs() {
		keys = append(keys, g.Key)
	}
	want := []string{"A30-24GB", "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200-180GB", "L4", "L40S", "T4"}
	if !slices.Equal(keys, want) {
		t.Fatalf("GPUs() keys = %v, want %v", keys, want)
	}
}

// expectedProfile is one row of a GPU's profile table, written out again by
// hand so a typo in the catalog data shows up here.
type expectedProfile struct {
	name             string
	compute, memSize int
	max              int
	starts           []int
	me               bool
}

func eightSlotTable(small, smallME, large, two, three, four, seven string) []expectedProfile {
	return []expectedProfile{
		{small, 1, 1, 7, []int{0, 1, 2, 3, 4, 5, 6}, false},
		{smallME, 1, 1, 1, []int{0, 1, 2, 3, 4, 5, 6}, true},
		{large, 1, 2, 4, []int{0, 2, 4, 6}, false},
		{two, 2, 2, 3, []int{0, 2, 4}, false},
		{three, 3, 4, 2, []int{0, 4}, false},
		{four, 4, 4, 1, []int{0}, false},
		{seven, 7, 8, 1, []int{0}, false},
	}
}

func TestCatalogTables(t *testing.T) {
	tests := []struct {
		key              string
		slots, compute   int
		profiles         []expectedProfile
		memoryMiBAtLeast int
	}{
		{"A30-24GB", 4, 4, []expectedProfile{
			{"1g.6gb", 1, 1, 4, []int{0, 1, 2, 3}, false},
			{"1g.6gb+me", 1, 1, 1, []int{0, 1, 2, 3}, true},
			{"2g.12gb", 2, 2, 2, []int{0, 2}, false},
			{"2g.12gb+me", 2, 2, 1, []int{0, 2}, true},
			{"4g.24gb", 4, 4, 1, []int{0}, false},
		}, 24 * 1000},
		{"A100-40GB", 8, 7, eightSlotTable("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"), 40 * 1000},
		{"A100-80GB", 8, 7, eightSlotTable("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"), 80 * 1000},
		{"H100-80GB", 8, 7, eightSlotTable("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"), 79 * 1000},
		{"H100-94GB", 8, 7, eightSlotTable("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"), 93 * 1000},
		{"H200-141GB", 8, 7, eightSlotTable("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"), 140 * 1000},
		{"B200-180GB", 8, 7, eightSlotTable("1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"), 178 * 1000},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			g := mustLookup(t, tt.key)
			if g.Key != tt.key || !g.MIG || g.MemorySlots != tt.slots || g.ComputeSlices != tt.compute {
				t.Fatalf("%s: key=%q MIG=%v slots=%d compute=%d, want MIG with %d slots and %d compute slices",
					tt.key, g.Key, g.MIG, g.MemorySlots, g.ComputeSlices, tt.slots, tt.compute)
			}
			if g.MemoryMiB < tt.memoryMiBAtLeast {
				t.Errorf("MemoryMiB = %d, want at least %d", g.MemoryMiB, tt.memoryMiBAtLeast)
			}
			if len(g.Profiles) != len(tt.profiles) {
				t.Fatalf("profiles = %v, want %d", g.ProfileNames(), len(tt.profiles))
			}
			for i, want := range tt.profiles {
				p := g.Profiles[i]
				if p.Name != want.name || p.ComputeSlices != want.compute || p.MemorySlices != want.memSize ||
					p.MaxInstances != want.max || p.MediaExtensions != want.me {
					t.Errorf("profile %d = %+v, want %+v", i, p, want)
				}
				var starts []int
				for _, pl := range p.Placements {
					starts = append(starts, pl.Start)
					if pl.Size != want.memSize {
						t.Errorf("%s placement %+v: size %d, want %d", p.Name, pl, pl.Size, want.memSize)
					}
				}
				if !slices.Equal(starts, want.starts) {
					t.Errorf("%s placement starts = %v, want %v", p.Name, starts, want.starts)
				}
			}
		})
	}
}

// TestCatalogInvariants checks every entry for internal consistency.
func TestCatalogInvariants(t *testing.T) {
	for _, g := range Default().GPUs() {
		t.Run(g.Key, func(t *testing.T) {
			if g.Name == "" || g.MemoryMiB <= 0 || len(g.Aliases) == 0 {
				t.Errorf("incomplete entry: %+v", g)
			}
			if !g.MIG {
				if len(g.Profiles) != 0 || g.MemorySlots != 0 || g.ComputeSlices != 0 {
					t.Errorf("non-MIG entry with MIG data: %+v", g)
				}
				if g.ProfileNames() != nil {
					t.Errorf("ProfileNames() = %v, want nil", g.ProfileNames())
				}
				return
			}
			// The GB in the key is the GPU's marketing memory size.
			gb, err := strconv.Atoi(strings.TrimSuffix(g.Key[strings.Index(g.Key, "-")+1:], "GB"))
			if err != nil {
				t.Fatalf("key %q has no memory size: %v", g.Key, err)
			}
			seen := map[string]bool{}
			for _, p := range g.Profiles {
				if seen[p.Name] {
					t.Errorf("duplicate profile %s", p.Name)
				}
				seen[p.Name] = true
				// "<compute>g.<memory>gb[+me]"
				var c, m int
				if _, err := fmt.Sscanf(p.Name, "%dg.%dgb", &c, &m); err != nil {
					t.Errorf("profile name %q: %v", p.Name, err)
				}
				if c != p.ComputeSlices {
					t.Errorf("%s: ComputeSlices %d, name says %d", p.Name, p.ComputeSlices, c)
				}
				if p.MemoryMiB != m*1024 {
					t.Errorf("%s: MemoryMiB %d, name says %d GB", p.Name, p.MemoryMiB, m)
				}
				// Memory per slot is about the GPU's memory over its slots.
				perSlot := float64(gb) / float64(g.MemorySlots)
				if got := float64(m) / float64(p.MemorySlices); got < perSlot*0.8 || got > perSlot*1.25 {
					t.Errorf("%s: %d GB over %d slots is far from %.1f GB per slot", p.Name, m, p.MemorySlices, perSlot)
				}
				if p.MediaExtensions != strings.HasSuffix(p.Name, "+me") {
					t.Errorf("%s: MediaExtensions = %v", p.Name, p.MediaExtensions)
				}
				if p.MediaExtensions && p.MaxInstances != 1 {
					t.Errorf("%s: +me profile with MaxInstances %d", p.Name, p.MaxInstances)
				}
				if p.MaxInstances < 1 || p.MaxInstances > len(p.Placements) {
					t.Errorf("%s: MaxInstances %d with %d placements", p.Name, p.MaxInstances, len(p.Placements))
				}
				if p.MaxInstances*p.ComputeSlices > g.ComputeSlices {
					t.Errorf("%s: %d instances need more than %d compute slices", p.Name, p.MaxInstances, g.ComputeSlices)
				}
				for _, pl := range p.Placements {
					if pl.Size != p.MemorySlices || pl.Start < 0 || pl.End() > g.MemorySlots || pl.Start%pl.Size != 0 {
						t.Errorf("%s: bad placement %+v on %d slots", p.Name, pl, g.MemorySlots)
					}
				}
			}
			if !slices.Equal(g.ProfileNames(), profileNamesOf(g)) {
				t.Errorf("ProfileNames() = %v", g.ProfileNames())
			}
		})
	}
}

func profileNamesOf(g *GPU) []string {
	var out []string
	for _, p := range g.Profiles {
		out = append(out, p.Name)
	}
	return out
}

func TestLookup(t *testing.T) {
	c := Default()
	tests := []struct {
		name string
		want string // catalog key; "" for not found
	}{
		{"A100-80GB", "A100-80GB"},
		{"a100-80gb", "A100-80GB"},
		{"  H200-141GB ", "H200-141GB"},
		{"NVIDIA-A100-SXM4-80GB", "A100-80GB"},
		{"nvidia-a100-sxm4-80gb", "A100-80GB"},
		{"NVIDIA-A100-80GB-PCIe", "A100-80GB"},
		{"NVIDIA A100 80GB PCIe", "A100-80GB"},
		{"NVIDIA A100-SXM4-80GB", "A100-80GB"},
		{"NVIDIA-A100-SXM4-40GB", "A100-40GB"},
		{"NVIDIA-A100-PCIE-40GB", "A100-40GB"},
		{"NVIDIA A100-SXM4-40GB", "A100-40GB"},
		{"Mock NVIDIA A100-SXM4-40GB", "A100-40GB"},
		{"NVIDIA-H100-80GB-HBM3", "H100-80GB"},
		{"NVIDIA H100 80GB HBM3", "H100-80GB"},
		{"NVIDIA-H100-PCIe", "H100-80GB"},
		{"NVIDIA-H100-NVL", "H100-94GB"},
		{"NVIDIA-H200", "H200-141GB"},
		{"NVIDIA H200", "H200-141GB"},
		{"NVIDIA-H200-141GB-HBM3", "H200-141GB"},
		{"NVIDIA-H200-NVL", "H200-141GB"},
		{"NVIDIA H200 141GB HBM3e", "H200-141GB"},
		{"NVIDIA-B200", "B200-180GB"},
		{"NVIDIA-A30", "A30-24GB"},
		{"NVIDIA-L4", "L4"},
		{"l40s", "L40S"},
		{"NVIDIA-L40S", "L40S"},
		{"Tesla-T4", "T4"},
		{"Tesla T4", "T4"},
		{"NVIDIA-T4", "T4"},
		// GPU Feature Discovery suffixes.
		{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "A100-40GB"},
		{"NVIDIA-H100-80GB-HBM3-MIG-3g.40gb", "H100-80GB"},
		{"Tesla-T4-SHARED", "T4"},
		// Unknown.
		{"", ""},
		{"A100", ""},
		{"NVIDIA-A100", ""},
		{"V100-32GB", ""},
		{"A100-80GB-extra", ""},
		{"-MIG-1g.5gb", ""},
	}
	for _, tt := range tests {
		g, ok := c.Lookup(tt.name)
		switch {
		case tt.want == "" && ok:
			t.Errorf("Lookup(%q) = %s, want not found", tt.name, g.Key)
		case tt.want != "" && !ok:
			t.Errorf("Lookup(%q) not found, want %s", tt.name, tt.want)
		case tt.want != "" && g.Key != tt.want:
			t.Errorf("Lookup(%q) = %s, want %s", tt.name, g.Key, tt.want)
		}
	}
}

// TestAliasesUnique checks that no name leads to two models.
func TestAliasesUnique(t *testing.T) {
	owner := map[string]string{}
	for _, g := range Default().GPUs() {
		for _, n := range append([]string{g.Key}, g.Aliases...) {
			k := normalizeName(n)
			if o, ok := owner[k]; ok && o != g.Key {
				t.Errorf("name %q belongs to %s and %s", n, o, g.Key)
			}
			owner[k] = g.Key
		}
	}
}

func TestDefaultIsFresh(t *testing.T) {
	a, b := Default(), Default()
	ga, _ := a.Lookup("A100-80GB")
	ga.Profiles[0].MaxInstances = 99
	ga.Profiles[0].Placements[0].Start = 5
	a.GPUs()[0].Key = "changed"
	gb, _ := b.Lookup("A100-80GB")
	if gb.Profiles[0].MaxInstances != 7 || gb.Profiles[0].Placements[0].Start != 0 {
		t.Fatalf("changing one catalog changed another: %+v", gb.Profiles[0])
	}
	if b.GPUs()[0].Key != "A30-24GB" {
		t.Fatalf("changing one catalog changed another: %s", b.GPUs()[0].Key)
	}
	if got := Default(); got == a || got == b {
		t.Fatal("Default returned a shared value")
	}
}

func TestProfile(t *testing.T) {
	g := mustLookup(t, "A100-80GB")
	if p, ok := g.Profile("3g.40gb"); !ok || p.Name != "3g.40gb" || p.ComputeSlices != 3 {
		t.Errorf("Profile(3g.40gb) = %+v, %v", p, ok)
	}
	if p, ok := g.Profile("1G.10GB+ME"); !ok || p.Name != "1g.10gb+me" {
		t.Errorf("Profile(1G.10GB+ME) = %+v, %v", p, ok)
	}
	if _, ok := g.Profile("1g.5gb"); ok {
		t.Error("Profile(1g.5gb) found on A100-80GB")
	}
	if _, ok := mustLookup(t, "L4").Profile("1g.10gb"); ok {
		t.Error("L4 has a MIG profile")
	}
	want := []string{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}
	if got := g.ProfileNames(); !slices.Equal(got, want) {
		t.Errorf("ProfileNames() = %v, want %v", got, want)
	}
}
