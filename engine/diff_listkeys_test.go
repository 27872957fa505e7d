package engine_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// clusterQueue is a ClusterQueue as Kueue's resource groups hold quotas:
// one flavor per pool, each listing every covered resource.
func clusterQueue(h100MIG string) map[string]any {
	return map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
		"metadata": map[string]any{"name": "risk"},
		"spec": map[string]any{"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"nvidia.com/gpu", "nvidia.com/mig-3g.40gb"},
			"flavors": []any{
				map[string]any{"name": "a100", "resources": []any{
					map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "0"},
					map[string]any{"name": "nvidia.com/mig-3g.40gb", "nominalQuota": "2"},
				}},
				map[string]any{"name": "h100", "resources": []any{
					map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "4"},
					map[string]any{"name": "nvidia.com/mig-3g.40gb", "nominalQuota": h100MIG},
				}},
			},
		}}},
	}
}

func deployment(image, level string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "team"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{
				map[string]any{"name": "app", "image": "app:1", "env": []any{
					map[string]any{"name": "LOG_LEVEL", "value": level},
					map[string]any{"name": "MODE", "value": "serve"},
				}, "ports": []any{map[string]any{"containerPort": int64(8080), "name": "http"}}},
				map[string]any{"name": "sidecar", "image": image},
			},
			"tolerations": []any{map[string]any{"key": "gpu", "effect": "NoSchedule"}},
		}}},
	}
}

// TestKeyedListPaths checks that a change inside a list with keys names the
// element by its keys, as the kind's schema defines them, and that a list
// without keys (atomic) names it by index.
func TestKeyedListPaths(t *testing.T) {
	rf := func(effect string) map[string]any {
		return map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
			"metadata": map[string]any{"name": "h100"},
			"spec": map[string]any{
				"nodeLabels":  map[string]any{"gpuform.dev/pool": "h100"},
				"tolerations": []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": effect}},
			},
		}
	}
	oddNames := func(first, second string) map[string]any {
		cq := clusterQueue("0")
		fl := cq["spec"].(map[string]any)["resourceGroups"].([]any)[0].(map[string]any)["flavors"].([]any)
		fl[0].(map[string]any)["name"], fl[1].(map[string]any)["name"] = first, second
		return cq
	}
	tests := []struct {
		name          string
		desired, live map[string]any
		want          string // the one changed path
	}{
		{"ClusterQueue: flavor and resource by name", clusterQueue("6"), clusterQueue("8"),
			"spec.resourceGroups[0].flavors[h100].resources[nvidia.com/mig-3g.40gb].nominalQuota"},
		{"ResourceFlavor: tolerations are atomic", rf("NoExecute"), rf("NoSchedule"),
			"spec.tolerations[0].effect"},
		{"Deployment: env by name in a container by name", deployment("side:1", "debug"), deployment("side:1", "info"),
			"spec.template.spec.containers[app].env[LOG_LEVEL].value"},
		{"Deployment: container by name", deployment("side:2", "info"), deployment("side:1", "info"),
			"spec.template.spec.containers[sidecar].image"},
		{"a key that is not a plain name is quoted", oddNames("a b", "c]d"), func() map[string]any {
			cq := oddNames("a b", "c]d")
			fl := cq["spec"].(map[string]any)["resourceGroups"].([]any)[0].(map[string]any)["flavors"].([]any)
			fl[1].(map[string]any)["resources"].([]any)[0].(map[string]any)["nominalQuota"] = "5"
			return cq
		}(), `spec.resourceGroups[0].flavors["c]d"].resources[nvidia.com/gpu].nominalQuota`},
		{"an all-digit key is quoted, never read as an index", oddNames("7", "8"), func() map[string]any {
			cq := oddNames("7", "8")
			fl := cq["spec"].(map[string]any)["resourceGroups"].([]any)[0].(map[string]any)["flavors"].([]any)
			fl[0].(map[string]any)["resources"].([]any)[1].(map[string]any)["nominalQuota"] = "1"
			return cq
		}(), `spec.resourceGroups[0].flavors["7"].resources[nvidia.com/mig-3g.40gb].nominalQuota`},
		{"duplicate keys: by index", oddNames("x", "x"), func() map[string]any {
			cq := oddNames("x", "x")
			fl := cq["spec"].(map[string]any)["resourceGroups"].([]any)[0].(map[string]any)["flavors"].([]any)
			fl[1].(map[string]any)["resources"].([]any)[0].(map[string]any)["nominalQuota"] = "5"
			return cq
		}(), "spec.resourceGroups[0].flavors[1].resources[nvidia.com/gpu].nominalQuota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := engine.DiffFields(tt.desired, &unstructured.Unstructured{Object: tt.live}, engine.FieldManager)
			var got []string
			for _, f := range fields {
				got = append(got, f.Path)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("changed paths %q, want one, %q", got, tt.want)
			}
		})
	}
}

// TestNumericKeyNamesItsField checks a list keyed by a number
// (containerPort): the element reads [containerPort=8080], never [8080].
func TestNumericKeyNamesItsField(t *testing.T) {
	d := deployment("side:1", "info")
	live := deployment("side:1", "info")
	c := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["ports"].([]any)[0].(map[string]any)["name"] = "web"
	fields := engine.DiffFields(d, &unstructured.Unstructured{Object: live}, engine.FieldManager)
	if len(fields) != 1 || fields[0].Path != "spec.template.spec.containers[app].ports[containerPort=8080].name" {
		t.Errorf("fields %+v, want one at spec.template.spec.containers[app].ports[containerPort=8080].name", fields)
	}
}
