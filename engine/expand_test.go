package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// leafLines renders leaves as "path = value" lines.
func leafLines(leaves []engine.Leaf) string {
	var b strings.Builder
	for _, l := range leaves {
		fmt.Fprintf(&b, "%s = %s\n", l.Path, engine.FormatValue(l.Value))
	}
	return b.String()
}

// TestExpandValue checks that a value holding lists of maps expands into
// one leaf per scalar field, in the list's order, each element named by
// the keys the kind's schema gives its list and by index otherwise, at
// every depth, and that lists of scalars stay one leaf.
func TestExpandValue(t *testing.T) {
	cq := schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ClusterQueue"}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	rule := schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"}
	cases := []struct {
		name string
		gvk  schema.GroupVersionKind
		path string
		v    any
		want string
	}{{
		name: "keyed lists nested in an unkeyed list",
		gvk:  cq, path: "spec.resourceGroups",
		v: clusterQueue("1")["spec"].(map[string]any)["resourceGroups"],
		want: `spec.resourceGroups[0].coveredResources = ["nvidia.com/gpu","nvidia.com/mig-3g.40gb"]
spec.resourceGroups[0].flavors[a100].name = "a100"
spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].name = "nvidia.com/gpu"
spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].nominalQuota = "0"
spec.resourceGroups[0].flavors[a100].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb"
spec.resourceGroups[0].flavors[a100].resources[nvidia.com/mig-3g.40gb].nominalQuota = "2"
spec.resourceGroups[0].flavors[h100].name = "h100"
spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].name = "nvidia.com/gpu"
spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].nominalQuota = "4"
spec.resourceGroups[0].flavors[h100].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb"
spec.resourceGroups[0].flavors[h100].resources[nvidia.com/mig-3g.40gb].nominalQuota = "1"
`,
	}, {
		name: "path given with list elements named by keys and indexes",
		gvk:  cq, path: "spec.resourceGroups[0].flavors[h100].resources",
		v: []any{map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "4"}},
		want: `spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].name = "nvidia.com/gpu"
spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].nominalQuota = "4"
`,
	}, {
		name: "Kubernetes kind: containers by name, env by name, tolerations by index",
		gvk:  deploy, path: "spec.template.spec",
		v: deployment("side:2", "debug")["spec"].(map[string]any)["template"].(map[string]any)["spec"],
		want: `spec.template.spec.containers[app].env[LOG_LEVEL].name = "LOG_LEVEL"
spec.template.spec.containers[app].env[LOG_LEVEL].value = "debug"
spec.template.spec.containers[app].env[MODE].name = "MODE"
spec.template.spec.containers[app].env[MODE].value = "serve"
spec.template.spec.containers[app].image = "app:1"
spec.template.spec.containers[app].name = "app"
spec.template.spec.containers[app].ports[containerPort=8080].containerPort = 8080
spec.template.spec.containers[app].ports[containerPort=8080].name = "http"
spec.template.spec.containers[sidecar].image = "side:2"
spec.template.spec.containers[sidecar].name = "sidecar"
spec.template.spec.tolerations[0].effect = "NoSchedule"
spec.template.spec.tolerations[0].key = "gpu"
`,
	}, {
		name: "keys not distinct: indexes",
		gvk:  deploy, path: "spec.template.spec.containers",
		v:    []any{map[string]any{"name": "a"}, map[string]any{"name": "a", "args": []any{}}},
		want: "spec.template.spec.containers[0].name = \"a\"\nspec.template.spec.containers[1].args = []\nspec.template.spec.containers[1].name = \"a\"\n",
	}, {
		name: "unknown kind, a map key in quotes, a list of scalars",
		gvk:  rule, path: `metadata.annotations["a b"]`,
		v:    []any{map[string]any{"x": []any{1, 2}, "m": map[string]any{}}, "plain"},
		want: "metadata.annotations[\"a b\"][0].m = {}\nmetadata.annotations[\"a b\"][0].x = [1,2]\nmetadata.annotations[\"a b\"][1] = \"plain\"\n",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaves, more := engine.ExpandValue(tc.gvk, tc.path, tc.v, 0)
			if got := leafLines(leaves); got != tc.want || more != 0 {
				t.Errorf("ExpandValue = (%d more)\n%s\nwant\n%s", more, got, tc.want)
			}
		})
	}
}

// TestExpandValueLimit checks that a value of 10,000 elements gives at
// most the limit of leaves and counts the rest.
func TestExpandValueLimit(t *testing.T) {
	list := make([]any, 10000)
	for i := range list {
		list[i] = map[string]any{"key": fmt.Sprint("k", i), "effect": "NoSchedule"}
	}
	gvk := schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ResourceFlavor"}
	leaves, more := engine.ExpandValue(gvk, "spec.tolerations", list, engine.ExpandLimit)
	if len(leaves) != engine.ExpandLimit || more != 20000-engine.ExpandLimit {
		t.Fatalf("ExpandValue gave %d leaves and %d more, want %d and %d", len(leaves), more, engine.ExpandLimit, 20000-engine.ExpandLimit)
	}
	if last := leaves[len(leaves)-1].Path; last != "spec.tolerations[99].key" {
		t.Errorf("last leaf %s, want spec.tolerations[99].key", last)
	}
}

// TestExpandable checks which values print as leaves: those holding a
// list of maps whose one-line form is long; lists of scalars, maps of
// scalars and short values stay on one line.
func TestExpandable(t *testing.T) {
	long := strings.Repeat("x", engine.ExpandInline)
	cases := []struct {
		v    any
		want bool
	}{
		{[]any{map[string]any{"name": long}}, true},
		{map[string]any{"a": map[string]any{"b": []any{map[string]any{"name": long}}}}, true},
		{[]any{[]any{map[string]any{"name": long}}}, true},
		{[]any{map[string]any{"key": "gpu", "effect": "NoSchedule"}}, false},
		{[]any{long, long}, false},
		{map[string]any{"a": long}, false},
		{long, false},
		{nil, false},
	}
	for i, tc := range cases {
		if got := engine.Expandable(tc.v); got != tc.want {
			t.Errorf("%d: Expandable(%s) = %v, want %v", i, engine.FormatValue(tc.v), got, tc.want)
		}
	}
}
