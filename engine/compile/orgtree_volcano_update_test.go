package compile_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestVolcanoTreeUpdatesPassTheWebhookRules: a change to an applied org
// tree under Volcano is planned in an order whose every Queue write Volcano
// v1.15.1's Queue webhook admits, checked against the Queues as they are
// after each write: lowering quotas lowers children before their parents,
// raising them raises parents first, and moving quota between siblings (or
// to a new tenant) lowers one before the other takes it. Before, every
// Queue waited for its parent's, so a lowered tree was refused at its first
// department (above children not yet lowered), on every rerun.
func TestVolcanoTreeUpdatesPassTheWebhookRules(t *testing.T) {
	beta := "tenant \"beta\" {\n  department = department.research\n  quota \"a100\" {\n    gpus = 3\n  }\n}"
	alpha := "tenant \"alpha\" {\n  department = department.research\n  quota \"a100\" {\n    gpus = 2\n  }\n}"
	withBeta := func(n string) func(string) string {
		return func(s string) string {
			return strings.Replace(s, beta, strings.Replace(beta, "gpus = 3", "gpus = "+n, 1), 1)
		}
	}
	tests := []struct {
		name   string
		change func(string) string
	}{
		{"a tenant lowered, its departments with it", withBeta("1")},
		{"a tenant raised, its departments with it", withBeta("6")},
		{"quota moved between two tenants of a department", func(s string) string {
			s = withBeta("1")(s)
			return strings.Replace(s, alpha, strings.Replace(alpha, "gpus = 2", "gpus = 4", 1), 1)
		}},
		{"quota moved to a new tenant", func(s string) string {
			return withBeta("1")(s) + "\ntenant \"delta\" {\n  department = department.research\n  quota \"a100\" {\n    gpus = 2\n  }\n}\n"
		}},
		{"a department's own quota lowered", func(s string) string {
			return strings.Replace(s, "quota \"a100\" {\n    gpus = 4\n  }", "quota \"a100\" {\n    gpus = 1\n  }", 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := volcanoOrgConfig("")
			before := compileDesired(t, src)
			after := compileDesired(t, tt.change(src))
			p := enginetest.MustDiff(t, after, enginetest.Applied(t, before), engine.DiffOptions{})
			queues := map[string]*engine.Object{}
			deps := map[engine.Key][]engine.Key{}
			for _, o := range before.Objects {
				if o.Object.GetKind() == "Queue" {
					queues[o.Object.GetName()] = o
				}
			}
			for _, o := range after.Objects {
				deps[o.Key()] = o.DependsOn
			}
			writes := 0
			for _, c := range p.Changes {
				if c.Key.Kind != "Queue" || c.Action == engine.ActionDelete {
					continue
				}
				writes++
				queues[c.Key.Name] = &engine.Object{Object: c.After, DependsOn: deps[c.Key]}
				if errs := volcanoWebhookErrors(queues); len(errs) > 0 {
					t.Errorf("write %d, %s %s, refused: %s", writes, c.Action, c.Key, strings.Join(errs, "; "))
					return
				}
			}
			if writes < 2 {
				t.Fatalf("the change wrote %d Queues; the case needs a tree change", writes)
			}
		})
	}
}
