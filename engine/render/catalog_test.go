package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
)

// TestCatalogGolden renders the whole built-in catalog: every GPU with its
// PCI device IDs and every profile with its placements
// (testdata/catalog.golden).
func TestCatalogGolden(t *testing.T) {
	var buf bytes.Buffer
	gpus := mig.Default().GPUs()
	if err := render.Catalog(&buf, gpus); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, g := range gpus {
		if !strings.Contains(out, g.Key+"  (") {
			t.Errorf("the catalog does not list %s", g.Key)
		}
		for _, p := range g.Profiles {
			if !strings.Contains(out, "  "+p.Name+" ") {
				t.Errorf("the catalog does not list %s's profile %s", g.Key, p.Name)
			}
		}
	}
	golden(t, "catalog.golden", out)
}
