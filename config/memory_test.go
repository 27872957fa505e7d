package config_test

import (
	"runtime"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// modelHeapBudget is what the typed model of benchmark size S (100
// tenants, 500 models) holds once loaded and its syntax tree dropped: the
// source bytes, the outline, the block instances with their source ranges
// and values. A plan keeps it to the end, so at size L it is a floor under
// the plan's peak. Measured as the heap in use after a collection, which
// does not depend on the machine's load. Lower it when a change holds
// less. Before the source ranges were kept compact (config/ranges.go) it
// was 2.0 MiB.
const modelHeapBudget int64 = 850 << 10 // 850 KiB

// TestModelMemoryBudget fails when the model of size S holds more than
// its budget by over 20%, or less than half of it (lower the budget then).
func TestModelMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	for _, s := range gen.Sizes() {
		if s.Name == "S" {
			if err := gen.Write(dir, s.Options()); err != nil {
				t.Fatal(err)
			}
		}
	}
	load := func() *config.Config {
		cfg, diags := config.LoadDir(dir, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		cfg.DropSyntax()
		return cfg
	}
	load() // anything the package builds once is built before measuring
	before := heapInUse()
	cfg := load()
	used := int64(heapInUse()) - int64(before)
	runtime.KeepAlive(cfg)
	t.Logf("model of size S: %d KiB (budget %d KiB)", used>>10, modelHeapBudget>>10)
	if limit := modelHeapBudget * 6 / 5; used > limit {
		t.Errorf("the model of size S holds %.2f MiB after DropSyntax, over its budget of %.2f MiB by more than 20%%: find what it keeps (a heap profile after LoadDir and DropSyntax, docs/performance.md)",
			float64(used)/(1<<20), float64(modelHeapBudget)/(1<<20))
	}
	if used < modelHeapBudget/2 {
		t.Errorf("the model of size S holds %.2f MiB after DropSyntax, under half its budget of %.2f MiB: lower modelHeapBudget to keep the gain",
			float64(used)/(1<<20), float64(modelHeapBudget)/(1<<20))
	}
}

// heapInUse is the heap's live bytes after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
