package compile_test

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
)

// TestAppliedQuotaReadsTheBackendsObjects: the quota a stack applied is
// read by its scheduler backend from the objects that backend writes it
// into. Under Kueue a tenant's ResourceQuota also allows what it may
// borrow, so the ClusterQueues' nominal quotas count, or the ResourceQuotas
// where no ClusterQueue was applied yet; every other scheduler reads the
// ResourceQuotas (a DRA pool's device-class quotas too), whatever other
// objects the cluster holds.
func TestAppliedQuotaReadsTheBackendsObjects(t *testing.T) {
	rq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "gpuform", "namespace": "a"},
		"spec": map[string]any{"hard": map[string]any{"requests.nvidia.com/mig-1g.10gb": "14", "requests.nvidia.com/gpu": "6", "requests.cpu": "8", "limits.nvidia.com/gpu": "9",
			"gpuform-cap-a100-1g-10gb.deviceclass.resource.k8s.io/devices": "5"}},
	}}
	cq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"resourceGroups": []any{
			map[string]any{"flavors": []any{
				map[string]any{"name": "a100", "resources": []any{map[string]any{"name": "nvidia.com/mig-1g.10gb", "nominalQuota": "7"}}},
				map[string]any{"name": "h100", "resources": []any{map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "3"}}},
			}},
			map[string]any{"flavors": []any{map[string]any{"name": "cap.any-node", "resources": []any{map[string]any{"name": "cpu", "nominalQuota": "8"}}}}},
		}},
	}}
	cohort := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": map[string]any{"name": "research"},
		"spec": map[string]any{"resourceGroups": []any{
			map[string]any{"flavors": []any{map[string]any{"name": "h100", "resources": []any{map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "2"}}}}},
		}},
	}}
	fromRQ := capacity.Counts{"nvidia.com/mig-1g.10gb": 14, "nvidia.com/gpu": 6, "gpuform-cap-a100-1g-10gb.deviceclass.resource.k8s.io/devices": 5}
	fromCQ := capacity.Counts{"nvidia.com/mig-1g.10gb": 7, "nvidia.com/gpu": 3}
	if !compile.ClaimsQuota("scheduling.volcano.sh", "Queue") {
		t.Error("ClaimsQuota leaves Volcano Queues out: plan would not pass them to AppliedQuota")
	}
	for _, tt := range []struct {
		name      string
		scheduler string
		applied   []*unstructured.Unstructured
		want      capacity.Counts
	}{
		{"none", config.SchedulerNone, []*unstructured.Unstructured{rq, cq}, fromRQ},
		{"volcano before its first apply", config.SchedulerVolcano, []*unstructured.Unstructured{rq}, fromRQ},
		// Under Volcano a department tenant's ResourceQuota also allows what
		// it may borrow: the Queues at the top count, a tenant's outside the
		// tree by its capability, a top-level department's by its deserved
		// (its whole tree), not the Queues under them.
		{"volcano with a tree", config.SchedulerVolcano, []*unstructured.Unstructured{rq, volcanoQueue("solo", "", nil, "1"), volcanoQueue("org-ai", "root", []string{"12"}, "12"),
			volcanoQueue("org-research", "org-ai", []string{"6"}, "8"), volcanoQueue("alpha", "org-research", []string{"2"}, "8")}, capacity.Counts{"nvidia.com/gpu": 13}},
		{"kueue", config.SchedulerKueue, []*unstructured.Unstructured{rq, cq}, fromCQ},
		{"kueue before its first apply", config.SchedulerKueue, []*unstructured.Unstructured{rq}, fromRQ},
		// A department's own quota is claimed on its pools too.
		{"kueue with a department", config.SchedulerKueue, []*unstructured.Unstructured{rq, cq, cohort}, capacity.Counts{"nvidia.com/mig-1g.10gb": 7, "nvidia.com/gpu": 5}},
		{"nothing applied", config.SchedulerKueue, nil, capacity.Counts{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Settings: &config.Settings{Scheduler: tt.scheduler}}
			got := compile.AppliedQuota(cfg, slices.Values(tt.applied))
			if !maps.Equal(got, tt.want) {
				t.Errorf("AppliedQuota = %v, want %v", got, tt.want)
			}
		})
	}
}

// volcanoQueue is a Volcano Queue under parent ("": none) with GPU
// capability and, when given, deserved.
func volcanoQueue(name, parent string, deserved []string, capability string) *unstructured.Unstructured {
	spec := map[string]any{"capability": map[string]any{"nvidia.com/gpu": capability, "cpu": "8"}}
	if parent != "" {
		spec["parent"] = parent
	}
	if len(deserved) > 0 {
		spec["deserved"] = map[string]any{"nvidia.com/gpu": deserved[0]}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": map[string]any{"name": name}, "spec": spec}}
}
