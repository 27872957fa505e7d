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

// The plan renderers' outputs of one plan with a create, updates (one a
// multi-line ConfigMap value) and a delete, as golden files.
func TestRenderPlanGolden(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	_ = unstructured.SetNestedField(live.Objects[engine.Key{Kind: "ResourceQuota", Namespace: "research", Name: "gpuform"}].Object, "1", "spec", "hard", "requests.nvidia.com/mig-3g.40gb")
	cm := engine.Key{Kind: "ConfigMap", Namespace: "gpu-operator", Name: "gpuform-mig-parted"}
	data := live.Objects[cm].Object["data"].(map[string]any)
	data["config.yaml"] = strings.Replace(data["config.yaml"].(string), "3g.40gb: 2", "3g.40gb: 1\n          1g.10gb: 1", 1)
	isvc := engine.Key{Group: "serving.kserve.io", Kind: "InferenceService", Namespace: "serving", Name: "sentiment"}
	gone := live.Objects[isvc].DeepCopy()
	gone.SetName("old-model")
	live.Objects[engine.KeyOf(gone)] = gone
	enginetest.Record(live, d.Stack) // gpuform applied it, then the configuration dropped it
	delete(live.Objects, engine.Key{Kind: "Namespace", Name: "serving"})
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"plan.txt", func(b *bytes.Buffer) error { return render.Text(b, p, render.TextOptions{}) }},
		{"plan.json", func(b *bytes.Buffer) error { return render.JSON(b, p) }},
		{"plan.md", func(b *bytes.Buffer) error { return render.Markdown(b, p) }},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			t.Fatal(err)
		}
		golden(t, "plan/"+f.name, buf.String())
	}
	if p.Summary != (engine.Summary{Add: 1, Change: 2, Destroy: 1, Unchanged: len(d.Objects) - 3}) {
		t.Errorf("summary = %+v", p.Summary)
	}
}
