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
	want := []string{
		"A30-24GB", "A100-40GB", "A100-80GB", "PG506-96GB",
		"H100-80GB", "H100-94GB", "H100-96GB", "H200-141GB", "GH200-144GB",
		"B200-180GB", "GB200-186GB", "RTX-PRO-6000-96GB",
		"L4", "L40S", "T4",
	}
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
		{"H100-96GB", 8, 7, eightSlotTable("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"), 95 * 1000},
		{"PG506-96GB", 8, 7, eightSlotTable("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"), 95 * 1000},
		{"GH200-144GB", 8, 7, eightSlotTable("1g.18gb", "1g.18gb+me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb"), 142 * 1000},
		{"GB200-186GB", 8, 7, eightSlotTable("1g.23gb", "1g.23gb+me", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb"), 184 * 1000},
		{"RTX-PRO-6000-96GB", 4, 4, []expectedProfile{
			{"1g.24gb", 1, 1, 4, []int{0, 1, 2, 3}, false},
			{"1g.24gb+me", 1, 1, 1, []int{0, 1, 2, 3}, true},
			{"1g.24gb+gfx", 1, 1, 4, []int{0, 1, 2, 3}, false},
			{"1g.24gb+me.all", 1, 1, 1, []int{0, 1, 2, 3}, true},
			{"1g.24gb-me", 1, 1, 4, []int{0, 1, 2, 3}, false},
			{"2g.48gb", 2, 2, 2, []int{0, 2}, false},
			{"2g.48gb+gfx", 2, 2, 2, []int{0, 2}, false},
			{"2g.48gb+me.all", 2, 2, 1, []int{0, 2}, true},
			{"2g.48gb-me", 2, 2, 2, []int{0, 2}, false},
			{"4g.96gb", 4, 4, 1, []int{0}, false},
			{"4g.96gb+gfx", 4, 4, 1, []int{0}, false},
		}, 95 * 1000},
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
			gb, err := strconv.Atoi(strings.TrimSuffix(g.Key[strings.LastIndex(g.Key, "-")+1:], "GB"))
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
				if want := p.Variant == VariantME || p.Variant == VariantMEAll; p.MediaExtensions != want {
					t.Errorf("%s: MediaExtensions = %v", p.Name, p.MediaExtensions)
				}
				if !strings.HasSuffix(p.Name, "gb"+p.Variant) {
					t.Errorf("%s: Variant %q is not the name's suffix", p.Name, p.Variant)
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
		// The GPUs NVIDIA's default mig-parted configuration names.
		{"NVIDIA H800", "H100-80GB"},
		{"NVIDIA-H800-PCIe", "H100-80GB"},
		{"NVIDIA H800 NVL", "H100-94GB"},
		{"NVIDIA A800-SXM4-80GB", "A100-80GB"},
		{"NVIDIA-GH200-480GB", "H100-96GB"},
		{"NVIDIA H20", "H100-96GB"},
		{"NVIDIA GH200 144G HBM3e", "GH200-144GB"},
		{"NVIDIA-GB200", "GB200-186GB"},
		{"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "RTX-PRO-6000-96GB"},
		{"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX-PRO-6000-96GB"},
		{"NVIDIA PG506-96GB", "PG506-96GB"},
		// PCI device IDs, in NVML's, the device ID's and lspci's forms.
		{"0x232410DE", "H100-80GB"},
		{"0x2324", "H100-80GB"},
		{"10de:2324", "H100-80GB"},
		{"0x233a10de", "H100-94GB"},
		{"0x294110DE", "GB200-186GB"},
		{"0x2BB5", "RTX-PRO-6000-96GB"},
		{"0x232410AB", ""}, // another vendor
		{"0x9999", ""},
		{"2324", ""},
		{"0x", ""},
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

// TestLookupPCI finds each model by every PCI device ID it lists, and a
// board whose name no alias spells by its ID: what Lookup of an unknown
// name cannot do.
func TestLookupPCI(t *testing.T) {
	c := Default()
	owner := map[uint32]string{}
	for _, g := range c.GPUs() {
		if g.MIG && len(g.PCIDeviceIDs) == 0 {
			t.Errorf("%s: no PCI device IDs", g.Key)
		}
		for _, id := range g.PCIDeviceIDs {
			if id&0xFFFF != nvidiaVendorID {
				t.Errorf("%s: %s is not an NVIDIA device ID in NVML's form", g.Key, FormatPCIDeviceID(id))
			}
			if o, ok := owner[id]; ok {
				t.Errorf("%s belongs to %s and %s", FormatPCIDeviceID(id), o, g.Key)
			}
			owner[id] = g.Key
			got, ok := c.LookupPCI(id)
			if !ok || got.Key != g.Key {
				t.Errorf("LookupPCI(%s) = %v, %v; want %s", FormatPCIDeviceID(id), got, ok, g.Key)
			}
			if got, ok := c.LookupPCI(id &^ 0xFFFF); !ok || got.Key != g.Key {
				t.Errorf("LookupPCI(%#x) (device ID alone) = %v, %v; want %s", id&^0xFFFF, got, ok, g.Key)
			}
		}
	}
	if _, ok := c.Lookup("NVIDIA H800 SXM5 Next"); ok {
		t.Fatal("an unknown name matched by name")
	}
	if g, ok := c.LookupPCI(0x232410DE); !ok || g.Key != "H100-80GB" {
		t.Fatalf("LookupPCI(H800) = %v, %v", g, ok)
	}
	if _, ok := c.LookupPCI(0x10DE); ok {
		t.Fatal("LookupPCI(vendor only) found a model")
	}
}

func TestParsePCIDeviceID(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
	}{
		{"0x233010DE", 0x233010DE}, {"0x233010de", 0x233010DE}, {" 0x2330 ", 0x233010DE},
		{"10de:2330", 0x233010DE}, {"10DE:2330", 0x233010DE},
		{"2330", 0}, {"0x23301", 0}, {"0x2330abcd", 0}, {"0xzzzz", 0}, {"0x0000", 0},
		{"10de:23301", 0}, {"1002:2330", 0}, {"", 0},
	}
	for _, tt := range tests {
		got, ok := ParsePCIDeviceID(tt.in)
		if ok != (tt.want != 0) || got != tt.want {
			t.Errorf("ParsePCIDeviceID(%q) = %#x, %v; want %#x", tt.in, got, ok, tt.want)
		}
	}
	if got := FormatPCIDeviceID(0x233010DE); got != "0x233010DE" {
		t.Errorf("FormatPCIDeviceID = %s", got)
	}
}
