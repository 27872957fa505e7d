package sim

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine"
)

// TestNodeTaints: a simulated node's taints, written key[=value]:Effect,
// are its spec.taints; a malformed one is an error naming the node, when
// the cluster is opened.
func TestNodeTaints(t *testing.T) {
	for _, tt := range []struct {
		taint string
		want  map[string]any
		err   string
	}{
		{"gpuform.dev/dedicated=secure:NoSchedule", map[string]any{"key": "gpuform.dev/dedicated", "value": "secure", "effect": "NoSchedule"}, ""},
		{"nvidia.com/gpu:NoExecute", map[string]any{"key": "nvidia.com/gpu", "effect": "NoExecute"}, ""},
		{"gpuform.dev/dedicated=secure", nil, `taint "gpuform.dev/dedicated=secure": write key=value:Effect`},
		{"gpuform.dev/dedicated:Sometimes", nil, "the effect is NoSchedule, PreferNoSchedule or NoExecute"},
		{"=x:NoSchedule", nil, "has no key"},
	} {
		t.Run(tt.taint, func(t *testing.T) {
			dir := t.TempDir()
			src := "runtime_classes = [\"gvisor\"]\nnode \"n\" {\n  gpu = \"A100-80GB\"\n  count = 1\n  taints = [\"" + tt.taint + "\"]\n}\n"
			if err := os.WriteFile(filepath.Join(dir, "c.sim.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := OpenIn(dir, "c.sim.hcl", CatalogGPUs{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), "node n: ") || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("open: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			live, err := c.Refresh(context.Background(), &engine.Desired{Stack: "s"}, engine.RefreshOptions{})
			if err != nil {
				t.Fatal(err)
			}
			taints, _ := live.Nodes[0].Object["spec"].(map[string]any)["taints"].([]any)
			if len(taints) != 1 || !reflect.DeepEqual(taints[0], tt.want) {
				t.Errorf("spec.taints %v, want [%v]", taints, tt.want)
			}
			if !live.RuntimeClasses["gvisor"] || len(live.RuntimeClasses) != 1 {
				t.Errorf("RuntimeClasses %v, want gvisor", live.RuntimeClasses)
			}
		})
	}
}
