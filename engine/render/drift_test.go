package render_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// Commits of the drift tests' history: c1 was applied, c2 is newer.
const (
	c1 = enginetest.C1
	c2 = enginetest.C2
)

func TestDriftSensitiveValuesHidden(t *testing.T) {
	cfg, d := enginetest.Stamped(t, c1)
	live := enginetest.DriftLive(t, d)
	_ = unstructured.SetNestedField(enginetest.Quota(live, "s").Object, "7", "spec", "hard", "requests.cpu")
	r := enginetest.CheckDrift(t, cfg, d, live, c1)
	enginetest.WantItems(t, r, "live-edit ResourceQuota s/gpuform")
	for _, write := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return render.DriftJSON(b, r, nil) },
		func(b *bytes.Buffer) error { return render.DriftText(b, r, render.TextOptions{}) },
		func(b *bytes.Buffer) error { return render.DriftMarkdown(b, r, nil) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), `"7"`) || strings.Contains(b.String(), `"8"`) || !strings.Contains(b.String(), engine.SensitiveValue) {
			t.Errorf("sensitive value shown:\n%s", b.String())
		}
	}
}

// The outputs of one report with every class, as golden files.
func TestDriftRenderGolden(t *testing.T) {
	_, d1 := enginetest.Stamped(t, c1)
	cfg2, d2 := enginetest.Stamped(t, c2, "gpus = 2", "gpus = 3")
	live := enginetest.DriftLive(t, d1)
	_ = unstructured.SetNestedField(enginetest.Quota(live, "b").Object, "4", "spec", "hard", "requests.nvidia.com/gpu")
	delete(live.Objects, engine.Key{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "b", Name: "gpuform-admins"})
	live.Nodes = append(live.Nodes, enginetest.PoolNode(t, d1, "a100", "a100-old", "NVIDIA-A100-SXM4-80GB", 8, "530.30.02"))
	r := enginetest.CheckDrift(t, cfg2, d2, live, c2, drift.AppliedConfig{Commit: c2, Desired: d2}, drift.AppliedConfig{Commit: c1, Desired: d1})
	r.CheckedAt = time.Date(2025, 3, 1, 4, 0, 0, 0, time.UTC)
	r.ConfigSource = &engine.ConfigSource{Ref: "main", Commit: c2}
	enginetest.WantItems(t, r,
		"live-edit ResourceQuota b/gpuform",
		"unapplied ResourceQuota a/gpuform",
		"missing RoleBinding b/gpuform-admins",
		"hardware Node a100-old")
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"drift.txt", func(b *bytes.Buffer) error { return render.DriftText(b, r, render.TextOptions{}) }},
		{"drift.json", func(b *bytes.Buffer) error { return render.DriftJSON(b, r, nil) }},
		{"drift.md", func(b *bytes.Buffer) error { return render.DriftMarkdown(b, r, nil) }},
		{"drift.prom", func(b *bytes.Buffer) error { return render.DriftMetrics(b, r) }},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			t.Fatal(err)
		}
		golden(t, "drift/"+f.name, buf.String())
	}
	var j map[string]any
	var buf bytes.Buffer
	_ = render.DriftJSON(&buf, r, nil)
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j["in_sync"] != false || j["counts"].(map[string]any)["missing"] != 1.0 {
		t.Errorf("json: in_sync %v, counts %v", j["in_sync"], j["counts"])
	}
}

func TestDriftMetricsInSync(t *testing.T) {
	r := &drift.Report{Stack: `we"ird\stack`, CheckedAt: time.Unix(1700000000, 500000000)}
	var b bytes.Buffer
	if err := render.DriftMetrics(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`gpuform_drift_objects{stack="we\"ird\\stack",class="live-edit"} 0`,
		`gpuform_drift_objects{stack="we\"ird\\stack",class="hardware"} 0`,
		`gpuform_drift_in_sync{stack="we\"ird\\stack"} 1`,
		`gpuform_drift_last_check_timestamp_seconds{stack="we\"ird\\stack"} 1700000000.5`,
		"# TYPE gpuform_drift_objects gauge",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, b.String())
		}
	}
}
