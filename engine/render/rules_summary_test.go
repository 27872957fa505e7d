package render_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
)

// A created PrometheusRule prints one line per rule group in the text
// plan, naming its alerts; Detail prints every field.
func TestTextSummarisesCreatedPrometheusRules(t *testing.T) {
	rule := func(alert, severity, wait string) map[string]any {
		r := map[string]any{"alert": alert, "expr": "DCGM_FI_DEV_GPU_UTIL < 10", "labels": map[string]any{"severity": severity}}
		if wait != "" {
			r["for"] = wait
		}
		return r
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"metadata": map[string]any{"name": "gpuform-q-pool-a100", "namespace": "monitoring", "labels": map[string]any{"team": "ml"}},
		"spec": map[string]any{"groups": []any{map[string]any{"name": "gpuform-q-pool-a100", "rules": []any{
			rule("GPUUtilizationLow", "info", "15m"), rule("GPUXIDError", "critical", ""),
		}}}},
	}}
	p := &engine.Plan{Stack: "q", Summary: engine.Summary{Add: 1}, Changes: []*engine.Change{{
		Action: engine.ActionCreate, Address: "pool.a100", APIVersion: "monitoring.coreos.com/v1",
		Key: engine.Key{Group: "monitoring.coreos.com", Kind: "PrometheusRule", Namespace: "monitoring", Name: "gpuform-q-pool-a100"}, After: obj,
	}}}
	var short, full bytes.Buffer
	if err := render.Text(&short, p, render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := render.Text(&full, p, render.TextOptions{Detail: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"      + spec.groups[gpuform-q-pool-a100]: 2 alerts: GPUUtilizationLow (info, for 15m), GPUXIDError (critical)\n",
		"# each rule's expression, annotations and labels: plan --detail, or -o json",
		`+ metadata.labels.team = "ml"`,
	} {
		if !strings.Contains(short.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, short.String())
		}
	}
	if strings.Contains(short.String(), ".expr =") {
		t.Errorf("text plan prints rule expressions without Detail:\n%s", short.String())
	}
	if !strings.Contains(full.String(), `rules[0].expr = "DCGM_FI_DEV_GPU_UTIL < 10"`) || strings.Contains(full.String(), "2 alerts:") {
		t.Errorf("Detail does not print every field:\n%s", full.String())
	}
}
