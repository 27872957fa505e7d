package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
)

// Every output that acts on a cluster names it first: the text plan, the
// Markdown plan, apply (its plan, and a saved plan's line), and the prompt.
func TestClusterNamed(t *testing.T) {
	dir := quickstartCopy(t)
	want := "simulated cluster " + filepath.Join(dir, "cluster.sim.hcl")
	for _, tt := range []struct {
		name string
		args []string
		line string
	}{
		{"plan", []string{"plan", dir}, "Cluster: " + want + "\n"},
		{"plan markdown", []string{"plan", dir, "--format", "markdown"}, "Cluster: `" + want + "`\n"},
		{"plan --out", []string{"plan", dir, "--out", filepath.Join(dir, "q.plan")}, "Cluster: " + want + "\n"},
		{"apply saved", []string{"--chdir", dir, "apply", "q.plan"}, "Applying the saved plan q.plan to stack quickstart on cluster " + want + ".\n"},
		{"plan after apply", []string{"plan", dir}, "Cluster: " + want + "\n\nNo changes."},
	} {
		r := runGpuform(t, nil, append([]string{"--no-color"}, tt.args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, tt.line) {
			t.Errorf("%s: exit %d, want 0 and %q\n%s\n%s", tt.name, r.code, tt.line, r.stdout, r.stderr)
		}
	}
	p := &engine.Plan{Stack: "prod", Source: "https://10.0.0.1:6443 (context prod-admin)"}
	if got := string(render.ApplyQuestion(p)); !strings.Contains(got, "on stack prod in cluster https://10.0.0.1:6443 (context prod-admin)?") || !strings.HasSuffix(got, `Enter "yes" to apply: `) {
		t.Errorf("prompt %q does not name the cluster", got)
	}
}
