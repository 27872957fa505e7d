package kinds_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/engine/kinds"
)

// rbacDir holds the ClusterRoles the registry's rules must match.
var rbacDir = filepath.Join("..", "..", "examples", "deploy", "rbac")

// grants expands rules into single grants, "verb group/resource" (with
// "[names]" when limited to resource names), so that rule sets compare
// however their rules are grouped and ordered.
func grants(rules []rbacv1.PolicyRule) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		names := ""
		if len(r.ResourceNames) > 0 {
			ns := slices.Clone(r.ResourceNames)
			sort.Strings(ns)
			names = " [" + strings.Join(ns, ",") + "]"
		}
		for _, v := range r.Verbs {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					out[v+" "+g+"/"+res+names] = true
				}
			}
			for _, u := range r.NonResourceURLs {
				out[v+" "+u] = true
			}
		}
	}
	return out
}

// compareRules returns the grants only want has and those only got has.
func compareRules(want, got []rbacv1.PolicyRule) (missing, extra []string) {
	w, g := grants(want), grants(got)
	for k := range w {
		if !g[k] {
			missing = append(missing, k)
		}
	}
	for k := range g {
		if !w[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// readClusterRole reads the one ClusterRole of a file of examples/deploy/rbac.
func readClusterRole(t *testing.T, path string) *rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var roles []*rbacv1.ClusterRole
	for _, doc := range strings.Split(string(b), "\n---") {
		var cr rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &cr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if cr.Kind != "" {
			roles = append(roles, &cr)
		}
	}
	if len(roles) != 1 || roles[0].Kind != "ClusterRole" {
		t.Fatalf("%s holds %d objects, want one ClusterRole", path, len(roles))
	}
	return roles[0]
}

// The ClusterRoles of examples/deploy/rbac (the Helm chart's rendering,
// make chart-update) grant exactly what the registry says each role needs:
// a kind added to the registry without its RBAC in the chart's template
// (charts/gpuform/templates/rbac), or a YAML edited by hand, fails here.
func TestRulesMatchExampleRoles(t *testing.T) {
	r := kinds.Builtin()
	for _, role := range kinds.Roles() {
		t.Run(string(role), func(t *testing.T) {
			path := filepath.Join(rbacDir, role.ClusterRoleName()+".yaml")
			cr := readClusterRole(t, path)
			if cr.Name != role.ClusterRoleName() {
				t.Errorf("the ClusterRole is named %q, want %q", cr.Name, role.ClusterRoleName())
			}
			missing, extra := compareRules(r.Rules(role), cr.Rules)
			if len(missing) > 0 {
				t.Errorf("%s.yaml lacks what the registry says the role needs:\n  %s", role.ClusterRoleName(), strings.Join(missing, "\n  "))
			}
			if len(extra) > 0 {
				t.Errorf("%s.yaml grants what the registry does not ask for:\n  %s", role.ClusterRoleName(), strings.Join(extra, "\n  "))
			}
		})
	}
}

// The comparison catches a missing verb, an extra resource and a widened
// resource-name limit, and ignores how rules are grouped and ordered.
func TestCompareRules(t *testing.T) {
	base := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"view", "edit"}},
	}
	tests := []struct {
		name           string
		got            []rbacv1.PolicyRule
		missing, extra int
	}{
		{"regrouped and reordered", []rbacv1.PolicyRule{
			base[1],
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "get"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
		}, 0, 0},
		{"a verb missing", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get"}}, base[1]}, 2, 0},
		{"a resource more", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "secrets"}, Verbs: []string{"get", "list"}}, base[1]}, 0, 2},
		{"names widened", []rbacv1.PolicyRule{base[0], {APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}}}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missing, extra := compareRules(base, tt.got)
			if len(missing) != tt.missing || len(extra) != tt.extra {
				t.Errorf("missing %v, extra %v; want %d and %d", missing, extra, tt.missing, tt.extra)
			}
		})
	}
}

// The read-only roles grant only get, list and watch, and drift's is
// plan's.
func TestReadOnlyRoles(t *testing.T) {
	r := kinds.Builtin()
	for _, role := range []kinds.Role{kinds.RolePlan, kinds.RoleDrift} {
		for g := range grants(r.Rules(role)) {
			if v, _, _ := strings.Cut(g, " "); v != "get" && v != "list" && v != "watch" {
				t.Errorf("%s grants %s", role, g)
			}
		}
	}
	if missing, extra := compareRules(r.Rules(kinds.RolePlan), r.Rules(kinds.RoleDrift)); len(missing)+len(extra) > 0 {
		t.Errorf("drift differs from plan: plan only %v, drift only %v", missing, extra)
	}
}

// A kind added to the registry shows in the generated rules of every role,
// with the verbs its entry names.
func TestRulesOfAFakeKind(t *testing.T) {
	r, err := kinds.Builtin().With(widget(55))
	if err != nil {
		t.Fatal(err)
	}
	want := map[kinds.Role][]string{
		kinds.RolePlan:  {"get", "list", "watch"},
		kinds.RoleDrift: {"get", "list", "watch"},
		kinds.RoleApply: {"list", "create", "patch", "delete"},
	}
	for role, verbs := range want {
		g := grants(r.Rules(role))
		for _, v := range verbs {
			if !g[v+" example.gpuform.dev/widgets"] {
				t.Errorf("%s rules lack %s on widgets: %v", role, v, r.Rules(role))
			}
		}
		if builtin := grants(kinds.Builtin().Rules(role)); builtin["list example.gpuform.dev/widgets"] {
			t.Errorf("the builtin %s rules have widgets", role)
		}
	}
}
