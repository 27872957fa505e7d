package kubernetes_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// variantsConfig is a stack with a pool of RTX PRO 6000s partitioned
// into +me.all and -me instances, and a tenant with a quota of both.
const variantsConfig = `
gpuform {
  stack       = "variants"
  mig_backend = "agent"
}

mig_layout "video" {
  gpu    = "RTX-PRO-6000-96GB"
  slices = { "1g.24gb+me.all" = 1, "1g.24gb-me" = 3 }
}

pool "rtx" {
  gpu        = "RTX-PRO-6000-96GB"
  mig_layout = mig_layout.video
}

tenant "media" {
  quota "rtx" {
    slices = { "1g.24gb+me.all" = 1, "1g.24gb-me" = 2 }
  }
}
`

// TestMIGVariantResourcesApply: the resource names of the +me.all and -me
// profiles (nvidia.com/mig-1g.24gb.me.all, nvidia.com/mig-1g.24gb-me) in a
// tenant's ResourceQuota are accepted by the real API server under strict
// validation (its check of quota resource names).
func TestMIGVariantResourcesApply(t *testing.T) {
	ctx := kubeapitest.Context(t)
	parsed, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(variantsConfig)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(parsed)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := client(t)
	live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Diff(d, live, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, o := range d.Objects {
		b, _ := o.Object.MarshalJSON()
		if strings.Contains(string(b), "nvidia.com/mig-1g.24gb.me.all") && strings.Contains(string(b), "nvidia.com/mig-1g.24gb-me") {
			named = append(named, o.Object.GetKind())
		}
	}
	// The quota, and the Namespace's gpuform.dev/gpu-pools annotation the
	// stack's GPU-pools policy reads.
	if strings.Join(named, ",") != "Namespace,ResourceQuota" {
		t.Fatalf("objects naming both resources: %v; want the tenant's Namespace and ResourceQuota", named)
	}
	rep := engine.Apply(ctx, p, c, engine.ApplyOptions{})
	for _, r := range rep.Results {
		if r.Err != nil {
			t.Errorf("apply %s: %v", r.Change.Key, r.Err)
		}
	}
	if !rep.OK() || rep.Count(engine.OutcomeApplied) == 0 {
		t.Fatalf("apply: %d applied, OK %v", rep.Count(engine.OutcomeApplied), rep.OK())
	}
	t.Logf("applied %d objects; the variant resources are in %v", rep.Count(engine.OutcomeApplied), named)
}
