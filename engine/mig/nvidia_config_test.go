package mig_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// nvidiaConfigPath is NVIDIA's default mig-parted configuration (the
// ConfigMap default-mig-parted-config) in the GPU Operator's Go module, at
// the version testdata/crds/go.mod pins.
const nvidiaConfigPath = "assets/state-mig-manager/0400_configmap.yaml"

// unattributed are the named configs of NVIDIA's file that no GPU it or the
// MIG user guide describes has every profile of: the file names no board
// for them (no device filter, no comment) and the guide has no table with
// these names. TestNVIDIADefaultConfig fails when the catalog learns one of
// them (drop it here) or when another config joins them.
var unattributed = []string{"all-3g.95gb", "all-4g.95gb", "all-7g.189gb"}

// migPartedEntry is one entry of a mig-parted v1 named config.
type migPartedEntry struct {
	DeviceFilter json.RawMessage `json:"device-filter"`
	Devices      json.RawMessage `json:"devices"`
	MIGEnabled   bool            `json:"mig-enabled"`
	MIGDevices   map[string]int  `json:"mig-devices"`
}

// filter returns the entry's device IDs, nil when it has no filter (it
// applies to every GPU).
func (e migPartedEntry) filter(t *testing.T, config string) []uint32 {
	t.Helper()
	if len(e.DeviceFilter) == 0 {
		return nil
	}
	var list []string
	if err := json.Unmarshal(e.DeviceFilter, &list); err != nil {
		var one string
		if err := json.Unmarshal(e.DeviceFilter, &one); err != nil {
			t.Fatalf("config %s: device-filter %s is neither a string nor a list", config, e.DeviceFilter)
		}
		list = []string{one}
	}
	var ids []uint32
	for _, s := range list {
		id, ok := mig.ParsePCIDeviceID(s)
		if !ok {
			t.Fatalf("config %s: device-filter %q is not a PCI device ID", config, s)
		}
		ids = append(ids, id)
	}
	return ids
}

// readNVIDIAConfig reads the named configs of NVIDIA's default mig-parted
// configuration from the GPU Operator's module in the Go module cache.
func readNVIDIAConfig(t *testing.T) map[string][]migPartedEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := kubeapitest.ModuleDir(ctx, "github.com/NVIDIA/gpu-operator")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, nvidiaConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Metadata struct{ Name string }
		Data     map[string]string
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("%s: %v", nvidiaConfigPath, err)
	}
	var spec struct {
		Version    string                      `json:"version"`
		MIGConfigs map[string][]migPartedEntry `json:"mig-configs"`
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["config.yaml"]), &spec); err != nil {
		t.Fatalf("%s config.yaml: %v", nvidiaConfigPath, err)
	}
	if cm.Metadata.Name != "default-mig-parted-config" || spec.Version != "v1" || len(spec.MIGConfigs) < 50 {
		t.Fatalf("%s: ConfigMap %q, version %q, %d configs: not the default mig-parted configuration",
			nvidiaConfigPath, cm.Metadata.Name, spec.Version, len(spec.MIGConfigs))
	}
	return spec.MIGConfigs
}

// TestNVIDIADefaultConfig cross-checks the catalog and the solver with
// NVIDIA's own default mig-parted configuration, as the GPU Operator ships
// it: every device ID of every device filter is a catalog GPU; for every
// named config and every GPU it applies to (those of its filter; without a
// filter, every catalog GPU that has all its profiles, as mig-parted
// refuses a profile a GPU lacks), every profile exists with the same
// name, the solver places the counts, and a config of one profile (NVIDIA's
// "all-<profile>", its maximum count) fails with one instance more. The
// file marks no config infeasible. Conversely, every config gpuform's GPU
// Operator backend names for a GPU exists in the file with the same counts
// for each of the GPU's device IDs.
func TestNVIDIADefaultConfig(t *testing.T) {
	configs := readNVIDIAConfig(t)
	cat := mig.Default()
	names := slices.Sorted(maps.Keys(configs))
	var orphans []string
	for _, name := range names {
		for i, e := range configs[name] {
			if string(e.Devices) != `"all"` {
				t.Errorf("config %s entry %d: devices %s; the test reads only \"all\"", name, i, e.Devices)
			}
			if !e.MIGEnabled {
				continue
			}
			targets, ok := entryGPUs(t, cat, name, e)
			if !ok {
				orphans = append(orphans, name)
				continue
			}
			for _, g := range targets {
				checkEntry(t, g, name, e.MIGDevices)
			}
		}
	}
	if !slices.Equal(orphans, unattributed) {
		t.Errorf("configs whose profiles no catalog GPU has all of: %v; want %v", orphans, unattributed)
	}
	for _, g := range cat.GPUs() {
		checkBackendConfigs(t, g, configs)
	}
}

// entryGPUs returns the catalog GPUs a config entry applies to; false for
// an entry without a filter whose profiles no catalog GPU has all of.
func entryGPUs(t *testing.T, cat *mig.Catalog, config string, e migPartedEntry) ([]*mig.GPU, bool) {
	t.Helper()
	if ids := e.filter(t, config); ids != nil {
		var out []*mig.GPU
		for _, id := range ids {
			g, ok := cat.LookupPCI(id)
			if !ok {
				t.Errorf("config %s: device %s of its filter is not in the catalog", config, mig.FormatPCIDeviceID(id))
				continue
			}
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		return out, true
	}
	var out []*mig.GPU
	for _, g := range cat.GPUs() {
		all := g.MIG
		for p := range e.MIGDevices {
			_, has := exactProfile(g, p)
			all = all && has
		}
		if all {
			out = append(out, g)
		}
	}
	return out, len(out) > 0
}

// exactProfile finds a profile of g spelt exactly as name.
func exactProfile(g *mig.GPU, name string) (*mig.Profile, bool) {
	for i := range g.Profiles {
		if g.Profiles[i].Name == name {
			return &g.Profiles[i], true
		}
	}
	return nil, false
}

// checkEntry checks one config's counts on one GPU.
func checkEntry(t *testing.T, g *mig.GPU, config string, counts map[string]int) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(counts)) {
		if _, ok := exactProfile(g, p); !ok {
			t.Errorf("GPU %s, config %s: profile %q is not in the catalog (it has %s)", g.Key, config, p, strings.Join(g.ProfileNames(), ", "))
			return
		}
	}
	if _, err := mig.Solve(g, counts); err != nil {
		t.Errorf("GPU %s, config %s: the solver does not place %s: %v", g.Key, config, describe(counts), err)
		return
	}
	if len(counts) != 1 {
		return
	}
	for p, n := range counts {
		if _, err := mig.Solve(g, map[string]int{p: n + 1}); err == nil {
			t.Errorf("GPU %s, config %s: profile %s: the solver places %d, one more than NVIDIA's maximum %d", g.Key, config, p, n+1, n)
		}
	}
}

// checkBackendConfigs checks that every config the GPU Operator backend
// names for g (mig.OperatorConfigs) is in NVIDIA's file with the same
// counts for each of g's device IDs.
func checkBackendConfigs(t *testing.T, g *mig.GPU, configs map[string][]migPartedEntry) {
	t.Helper()
	ours := mig.OperatorConfigs(g)
	for _, name := range slices.Sorted(maps.Keys(ours)) {
		entries, ok := configs[name]
		if !ok {
			t.Errorf("GPU %s, config %s: gpuform names it, NVIDIA's file has no such config", g.Key, name)
			continue
		}
		for _, id := range g.PCIDeviceIDs {
			var applies []migPartedEntry
			for _, e := range entries {
				if ids := e.filter(t, name); ids == nil || slices.Contains(ids, id) {
					applies = append(applies, e)
				}
			}
			if len(applies) != 1 {
				t.Errorf("GPU %s (%s), config %s: %d entries of NVIDIA's file apply, want 1", g.Key, mig.FormatPCIDeviceID(id), name, len(applies))
				continue
			}
			want := ours[name]
			got := applies[0].MIGDevices
			if want == nil {
				if applies[0].MIGEnabled {
					t.Errorf("GPU %s, config %s: gpuform turns MIG off, NVIDIA's file turns it on", g.Key, name)
				}
				continue
			}
			if !applies[0].MIGEnabled || !maps.Equal(got, want) && len(got)+len(want) > 0 {
				t.Errorf("GPU %s (%s), config %s: gpuform's %s, NVIDIA's %s (MIG on: %v)",
					g.Key, mig.FormatPCIDeviceID(id), name, describe(want), describe(got), applies[0].MIGEnabled)
			}
		}
	}
}

// describe formats counts as "1g.10gb x2, 3g.40gb x1", sorted.
func describe(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, counts[k])
	}
	if len(parts) == 0 {
		return "no instances"
	}
	return strings.Join(parts, ", ")
}
