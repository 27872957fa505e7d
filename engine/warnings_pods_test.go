package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestPodWarnings: a warning per tenant and rule its running pods break,
// from the configuration (priorities, runtime_class, quota pools), located
// at the tenant, naming a few pods and counting the rest; none for pods
// that keep the rules or live outside the tenants' namespaces.
func TestPodWarnings(t *testing.T) {
	cfg := enginetest.LoadExample(t, "isolation")
	ok := engine.LivePod{Namespace: "payments", Name: "ok", RuntimeClass: "gvisor", Pool: "secure", GPU: true}
	many := make([]engine.LivePod, 0, 10_000)
	for i := range 10_000 {
		many = append(many, engine.LivePod{Namespace: "payments", Name: fmt.Sprintf("p%05d", i)})
	}
	for _, tt := range []struct {
		name string
		pods []engine.LivePod
		want []string
	}{
		{"none", nil, nil},
		{"keep the rules", []engine.LivePod{ok, {Namespace: "research", Name: "r", Pool: "a100", GPU: true}, {Namespace: "elsewhere", Name: "x", PriorityClass: "system-node-critical"}}, nil},
		{"runtime class", []engine.LivePod{ok, {Namespace: "payments", Name: "b"}, {Namespace: "payments", Name: "a", RuntimeClass: "runc"}},
			[]string{"2 running pods of tenant.payments in namespace payments break its runtime_class (gvisor): a, b; "}},
		{"priorities", []engine.LivePod{{Namespace: "research", Name: "r", PriorityClass: "system-node-critical"}},
			[]string{"1 running pod of tenant.research in namespace research breaks its priorities (none allowed): r; "}},
		{"pool without quota", []engine.LivePod{{Namespace: "research", Name: "r", Pool: "secure", GPU: true}, {Namespace: "research", Name: "cpu", Pool: "secure"}},
			[]string{"1 running pod of tenant.research in namespace research breaks its quotas (GPUs on a pool where it has none): r; "}},
		{"10,000 pods, one line", many,
			[]string{"10000 running pods of tenant.payments in namespace payments break its runtime_class (gvisor): p00000, p00001, p00002, p00003, p00004 and 9995 more; "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			diags := engine.PodWarnings(cfg, &engine.Live{Pods: tt.pods})
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
