package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// TestPlanWarningsCarryPositions: a plan warning about a block (here the
// pool whose MIG layouts the GPU Operator's ClusterPolicy must point at)
// gets that block's range from LocateWarnings and renders in the text plan
// as validation diagnostics do (engine/render's text plan); a warning
// without a position renders as plan warnings always did; JSON, Markdown and
// plan files keep the message only.
func TestPlanWarningsCarryPositions(t *testing.T) {
	cfg := enginetest.LoadExample(t, "quickstart")
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	live := enginetest.EmptyLive(t)
	_ = unstructured.SetNestedField(live.ClusterPolicies[0].Object, "default-mig-parted-config", "spec", "migManager", "config", "name")
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	const msg = `ClusterPolicy cluster-policy points migManager at ConfigMap "default-mig-parted-config"; gpuform will point it at "gpuform-mig-parted", where the configuration's layouts are`
	if len(p.Warnings) != 1 || p.Warnings[0].Summary != msg || p.Warnings[0].Subject != nil {
		t.Fatalf("warnings before LocateWarnings = %v", p.Warnings)
	}
	engine.LocateWarnings(p.Warnings, cfg)
	if s := p.Warnings[0].Subject; s == nil || *s != cfg.Pools[0].DeclRange {
		t.Fatalf("subject = %v, want pool a100's block %v", s, cfg.Pools[0].DeclRange)
	}
	p.Warnings = append(p.Warnings, engine.Warning("a warning about no block", ""), engine.Warning("a warning about a block not in the configuration", "pool.gone"))
	engine.LocateWarnings(p.Warnings, cfg)

	text := func(opts render.TextOptions) string {
		var buf bytes.Buffer
		if err := render.Text(&buf, p, opts); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	want := "\nWarning: " + msg + "\n\n  on main.hcl line 19, in pool \"a100\":\n  19: pool \"a100\" {\n      ^^^^^^^^^^^\n" +
		"\nWarning: a warning about no block\n" +
		"\nWarning: a warning about a block not in the configuration\n" +
		"\nPlan: "
	if got := text(render.TextOptions{Files: cfg.Files}); !strings.Contains(got, want) {
		t.Errorf("text plan:\n%s\nwant it to contain:\n%s", got, want)
	}
	if got := text(render.TextOptions{}); !strings.Contains(got, "\nWarning: "+msg+"\n\n  on main.hcl line 19:\n\nWarning: a warning about no block\n") {
		t.Errorf("text plan without the files:\n%s", got)
	}

	var js, md bytes.Buffer
	if err := render.JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	if err := render.Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"warnings": [`) || strings.Contains(js.String(), "main.hcl") || !strings.Contains(md.String(), "- a warning about no block\n") || strings.Contains(md.String(), "main.hcl") {
		t.Errorf("JSON or Markdown:\n%s\n%s", js.String(), md.String())
	}

	pf, err := engine.NewPlanFile(p, "test", "hash", "ctx", true)
	if err != nil {
		t.Fatal(err)
	}
	back := pf.Plan().Warnings
	if len(back) != 3 || back[0].Summary != msg || back[0].Subject != nil || back[0].Severity != hcl.DiagWarning {
		t.Errorf("warnings read back from a plan file = %v", back)
	}
}
