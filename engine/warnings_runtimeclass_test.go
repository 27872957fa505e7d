package engine_test

import (
	"strings"
	"testing"

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
