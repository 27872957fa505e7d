package compile_test

import (
	"slices"
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
// to a new tenant) lowers one before the other takes it. Removing a tenant
// takes two applies, as docs/language.md says: its department is lowered
// while the tenant's Queue, deleted after every update, still stands. Before,
// every Queue waited for its parent's, so a lowered tree was refused at its
// first department, above children not yet lowered, on every rerun.
func TestVolcanoTreeUpdatesPassTheWebhookRules(t *testing.T) {
	tenant := func(name, n string) string {
		return "tenant \"" + name + "\" {\n  department = department.research\n  quota \"a100\" {\n    gpus = " + n + "\n  }\n}"
	}
	set := func(name, from, to string) func(string) string {
		return func(s string) string { return strings.Replace(s, tenant(name, from), tenant(name, to), 1) }
	}
	tests := []struct {
		name    string
		change  func(string) string
		applies int // applies until the plan is empty
		refused int // writes the webhook refuses on the way
	}{
		{"a tenant lowered, its departments with it", set("beta", "3", "1"), 1, 0},
		{"a tenant raised, its departments with it", set("beta", "3", "6"), 1, 0},
		{"quota moved between two tenants of a department", func(s string) string {
			return set("alpha", "2", "4")(set("beta", "3", "1")(s))
		}, 1, 0},
		{"quota moved to a new tenant", func(s string) string {
			return set("beta", "3", "1")(s) + "\n" + tenant("delta", "2") + "\n"
		}, 1, 0},
		{"a department's own quota lowered", func(s string) string {
			return strings.Replace(s, "quota \"a100\" {\n    gpus = 4\n  }", "quota \"a100\" {\n    gpus = 1\n  }", 1)
		}, 1, 0},
		{"a tenant removed", func(s string) string { return strings.Replace(s, tenant("beta", "3"), "", 1) }, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := volcanoOrgConfig("")
			before := compileDesired(t, src)
			after := compileDesired(t, tt.change(src))
			live := enginetest.Applied(t, before)
			queues := map[string]*engine.Object{}
			for _, o := range before.Objects {
				if o.Object.GetKind() == "Queue" {
					queues[o.Object.GetName()] = o
				}
			}
			deps := map[engine.Key][]engine.Key{}
			for _, o := range after.Objects {
				deps[o.Key()] = o.DependsOn
			}
			applies, refused := 0, 0
			for ; applies < 4; applies++ {
				p := enginetest.MustDiff(t, after, live, engine.DiffOptions{})
				if len(p.Changes) == 0 {
					break
				}
				var failed []engine.Key
				for _, c := range p.Changes {
					if slices.ContainsFunc(c.DependsOn, func(k engine.Key) bool { return slices.Contains(failed, k) }) {
						failed = append(failed, c.Key)
						continue
					}
					if c.Key.Kind == "Queue" {
						prev := queues[c.Key.Name]
						if c.Action == engine.ActionDelete {
							delete(queues, c.Key.Name)
						} else {
							queues[c.Key.Name] = &engine.Object{Object: c.After, DependsOn: deps[c.Key]}
						}
						if errs := volcanoWebhookErrors(queues); len(errs) > 0 {
							t.Logf("apply %d: %s %s refused: %s", applies+1, c.Action, c.Key, strings.Join(errs, "; "))
							refused++
							failed = append(failed, c.Key)
							if queues[c.Key.Name] = prev; prev == nil {
								delete(queues, c.Key.Name)
							}
							continue
						}
					}
					if c.Action == engine.ActionDelete {
						delete(live.Objects, c.Key)
					} else {
						live.Objects[c.Key] = enginetest.ServerCopy(t, c.After)
					}
				}
				enginetest.Record(live, after.Stack)
			}
			if applies != tt.applies || refused != tt.refused {
				t.Errorf("converged after %d applies with %d writes refused, want %d and %d", applies, refused, tt.applies, tt.refused)
			}
		})
	}
}
