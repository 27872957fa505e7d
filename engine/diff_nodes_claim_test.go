package engine_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestNodeOfAnotherStackIsAConflict: a node a pool selects whose pool
// label another stack's node field manager owns is a conflict (an adoption
// with --adopt) even when its labels already are what this stack wants:
// two stacks' pools of the same name write the same labels, and
// server-side apply lets both managers own them. Before, a node whose
// labels matched was skipped before the check, and both stacks claimed it.
func TestNodeOfAnotherStackIsAConflict(t *testing.T) {
	_, d := enginetest.Stamped(t, enginetest.C1)
	live := enginetest.DriftLive(t, d)
	poolLabel := []byte(fmt.Sprintf(`{"f:metadata":{"f:labels":{"f:%s":{}}}}`, engine.LabelPool))
	claimed := live.Nodes[1]
	claimed.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: engine.NodeFieldManager(d.Stack), Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: poolLabel}},
		{Manager: engine.NodeFieldManager("other"), Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: poolLabel}},
	})
	for _, tt := range []struct {
		adopt bool
		want  engine.Action
	}{{false, engine.ActionConflict}, {true, engine.ActionAdopt}} {
		p := enginetest.MustDiff(t, d, live, engine.DiffOptions{Adopt: tt.adopt})
		var nodes []*engine.Change
		for _, c := range p.Changes {
			if c.Key.Kind == "Node" {
				nodes = append(nodes, c)
			}
		}
		if len(nodes) != 1 || nodes[0].Key.Name != claimed.GetName() || nodes[0].Action != tt.want {
			t.Fatalf("adopt %v: node changes %v, want only %s of %s", tt.adopt, nodes, tt.want, claimed.GetName())
		}
		if !tt.adopt && (!strings.Contains(nodes[0].Reason, "is already in a pool of gpuform stack other") || p.Summary.Conflicts != 1) {
			t.Errorf("reason %q, %d conflicts", nodes[0].Reason, p.Summary.Conflicts)
		}
	}
}
