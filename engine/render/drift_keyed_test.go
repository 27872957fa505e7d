package render_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// TestDriftKeyedPaths edits a ClusterQueue's quota by hand and checks that
// drift's text, JSON and Markdown name the flavor and resource by their
// keys, as plan does.
func TestDriftKeyedPaths(t *testing.T) {
	cfg, d := enginetest.Stamped(t, c1, `gpuform { stack = "d" }`, "gpuform {\n  stack     = \"d\"\n  scheduler = \"kueue\"\n}")
	live := enginetest.DriftLive(t, d)
	cq := live.Objects[engine.Key{Group: "kueue.x-k8s.io", Kind: "ClusterQueue", Name: "a"}]
	if cq == nil {
		t.Fatal("no live ClusterQueue a")
	}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	flavor := groups[0].(map[string]any)["flavors"].([]any)[0].(map[string]any)
	flavor["resources"].([]any)[0].(map[string]any)["nominalQuota"] = "5"
	_ = unstructured.SetNestedSlice(cq.Object, groups, "spec", "resourceGroups")
	r := enginetest.CheckDrift(t, cfg, d, live, c1)
	enginetest.WantItems(t, r, "live-edit ClusterQueue a")
	const want = "spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].nominalQuota"
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"text", func(b *bytes.Buffer) error { return render.DriftText(b, r, render.TextOptions{}) }},
		{"JSON", func(b *bytes.Buffer) error { return render.DriftJSON(b, r, nil) }},
		{"Markdown", func(b *bytes.Buffer) error { return render.DriftMarkdown(b, r, nil) }},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("drift %s does not show %s:\n%s", f.name, want, buf.String())
		}
	}
}
