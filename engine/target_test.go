package engine

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNarrow: a targeted plan keeps the targeted blocks and what they
// depend on; a block that grants access brings the stack's admission
// policies; a targeted destroy that deletes enforcement deletes the access
// it guards; an unknown address is refused.
func TestNarrow(t *testing.T) {
	ns := func(n string) Key { return KeyFor(KindNamespace, "", n) }
	rq := func(n string) Key { return KeyFor(KindResourceQuota, n, QuotaName) }
	rb := func(n string) Key { return KeyFor(KindRoleBinding, n, "gpuform-admins") }
	vap, vapb := KeyFor(KindVAP, "", "gpuform-s-p"), KeyFor(KindVAPBinding, "", "gpuform-s-p")
	pc := KeyFor(KindPriorityClass, "", "hi")
	obj := func(k Key, address string, deps ...Key) *Object {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": k.Kind, "metadata": map[string]any{"name": k.Name, "namespace": k.Namespace}}}
		u.SetAPIVersion(map[bool]string{true: k.Group + "/v1", false: "v1"}[k.Group != ""])
		return &Object{Address: address, Object: u, DependsOn: deps}
	}
	d := &Desired{Stack: "s", Objects: []*Object{
		obj(pc, "priority.hi"),
		obj(ns("a"), "tenant.a", pc), obj(rq("a"), "tenant.a", ns("a")), obj(rb("a"), "tenant.a", ns("a"), rq("a")),
		obj(ns("b"), "tenant.b"), obj(rq("b"), "tenant.b", ns("b")), obj(rb("b"), "tenant.b", ns("b"), rq("b")),
		obj(vap, StackAddress), obj(vapb, StackAddress, vap),
	}}
	all := func(action Action) *Plan {
		p := &Plan{Destroy: action == ActionDelete}
		for _, o := range d.Objects {
			p.Changes = append(p.Changes, &Change{Address: o.Address, Key: o.Key(), Action: action})
		}
		return p
	}
	for _, c := range []struct {
		name    string
		action  Action
		targets []string
		want    []Key
	}{
		{"a tenant brings its dependencies and the stack's policies", ActionCreate, []string{"tenant.a"}, []Key{pc, ns("a"), rq("a"), rb("a"), vap, vapb}},
		{"a priority alone", ActionCreate, []string{"priority.hi"}, []Key{pc}},
		{"destroy of a tenant deletes only its objects", ActionDelete, []string{"tenant.b"}, []Key{ns("b"), rq("b"), rb("b")}},
		{"destroy of the policies deletes every tenant's access", ActionDelete, []string{StackAddress}, []Key{rb("a"), rb("b"), vap, vapb}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := all(c.action)
			if err := Narrow(p, d, c.targets); err != nil {
				t.Fatal(err)
			}
			var got []Key
			for _, ch := range p.Changes {
				got = append(got, ch.Key)
			}
			slices.SortFunc(got, func(a, b Key) int { return map[bool]int{true: -1, false: 1}[a.Less(b)] })
			want := slices.Clone(c.want)
			slices.SortFunc(want, func(a, b Key) int { return map[bool]int{true: -1, false: 1}[a.Less(b)] })
			if !slices.Equal(got, want) {
				t.Errorf("kept %v, want %v", got, want)
			}
			if !slices.Equal(p.Targets, c.targets) || p.Summary.Add+p.Summary.Destroy != len(c.want) {
				t.Errorf("targets %v, summary %+v", p.Targets, p.Summary)
			}
		})
	}
	var te *TargetError
	if err := Narrow(all(ActionCreate), d, []string{"tenant.c"}); !errors.As(err, &te) || !slices.Contains(te.Known, "tenant.a") {
		t.Errorf("unknown target: %v", err)
	}
}
