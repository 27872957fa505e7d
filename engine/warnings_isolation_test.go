package engine_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestRuntimeClassWarnings: a warning per runtime_class the cluster lacks,
// located at its tenant; none when the provider read no RuntimeClasses.
func TestRuntimeClassWarnings(t *testing.T) {
	cfg := enginetest.LoadExample(t, "isolation", `runtime_class = "gvisor"`, `runtime_class = ["gvisor", "kata"]`)
	for _, tt := range []struct {
		name    string
		classes map[string]bool
		want    []string
	}{
		{"not read", nil, nil},
		{"all there", map[string]bool{"gvisor": true, "kata": true}, nil},
		{"one missing", map[string]bool{"gvisor": true, "runc": true}, []string{"RuntimeClass kata not found: tenant.payments's pods"}},
		{"none there", map[string]bool{}, []string{"RuntimeClass gvisor not found", "RuntimeClass kata not found"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			diags := engine.RuntimeClassWarnings(cfg, &engine.Live{RuntimeClasses: tt.classes})
			if len(diags) != len(tt.want) {
				t.Fatalf("warnings %q, want %d", engine.WarningTexts(diags), len(tt.want))
			}
			engine.LocateWarnings(diags, cfg)
			for i, d := range diags {
				if !strings.HasPrefix(d.Summary, tt.want[i]) {
					t.Errorf("warning %q, want it to start with %q", d.Summary, tt.want[i])
				}
				if d.Subject == nil || d.Subject.Filename != "isolation.hcl" {
					t.Errorf("warning %q at %v, want the tenant's block in isolation.hcl", d.Summary, d.Subject)
				}
			}
		})
	}
}

// TestTaintWarnings: a warning per node of a tainted pool that lacks one of
// its taints (another value or effect is not the taint); none for nodes
// outside the pool or with the taint.
func TestTaintWarnings(t *testing.T) {
	cfg := enginetest.LoadExample(t, "isolation")
	node := func(name, group string, taints ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name}}}
		u.SetLabels(map[string]string{"gpuform.dev/node-group": group})
		if len(taints) > 0 {
			list := make([]any, len(taints))
			for i, tt := range taints {
				list[i] = tt
			}
			u.Object["spec"] = map[string]any{"taints": list}
		}
		return u
	}
	good := map[string]any{"key": "gpuform.dev/dedicated", "value": "secure", "effect": "NoSchedule"}
	otherValue := map[string]any{"key": "gpuform.dev/dedicated", "value": "risk", "effect": "NoSchedule"}
	otherEffect := map[string]any{"key": "gpuform.dev/dedicated", "value": "secure", "effect": "NoExecute"}
	live := &engine.Live{Nodes: []*unstructured.Unstructured{
		node("tainted", "secure", good),
		node("bare", "secure"),
		node("wrong-value", "secure", otherValue),
		node("wrong-effect", "secure", otherEffect, map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}),
		node("elsewhere", "a100"),
	}}
	var got []string
	for _, d := range engine.TaintWarnings(cfg, live) {
		name, _, _ := strings.Cut(strings.TrimPrefix(d.Summary, "Node "), " ")
		got = append(got, name)
		if !strings.Contains(d.Summary, "of pool.secure lacks taint gpuform.dev/dedicated=secure:NoSchedule") {
			t.Errorf("warning %q", d.Summary)
		}
	}
	if strings.Join(got, ",") != "bare,wrong-value,wrong-effect" {
		t.Errorf("warnings for nodes %v, want bare, wrong-value, wrong-effect", got)
	}
}
