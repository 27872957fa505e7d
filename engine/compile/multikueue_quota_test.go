package compile_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// mkQuotaFleet: tenant train, dispatched by MultiKueue from hub to east
// and west, with a quota on each read from the member's cluster.values
// (east 3 H100s, west 5, borrowing 1 and 2, lending 2 on east only) and
// its cpu and memory likewise. Every member evaluates the tenant, the
// manager too, so each figure has a default. HUB is the manager's cluster block body;
// POOL the h100 pool's placement; EXTRA more blocks.
const mkQuotaFleet = `
gpuform {
  stack     = "fleet"
  scheduler = "kueue"
}

cluster "hub" {
  role = "manager"
  HUB
}

cluster "east" {
  kubeconfig_secret = "east-kubeconfig"
  values = { gpus = 3, borrow = 1, lending = { gpus = 2 }, cpu = "4", memory = "16Gi" }
}

cluster "west" {
  kubeconfig_secret = "west-kubeconfig"
  values = { gpus = 5, borrow = 2, cpu = "2", memory = "512Mi" }
}

pool "h100" {
  gpu = "H100-80GB"
  POOL
}

tenant "train" {
  dispatch = "multikueue"
  cohort   = "fleet"
  quota "h100" {
    gpus            = lookup(cluster.values, "gpus", 0)
    borrowing_limit = { gpus = lookup(cluster.values, "borrow", 0) }
    lending_limit   = lookup(cluster.values, "lending", {})
  }
  cpu    = lookup(cluster.values, "cpu", "1")
  memory = lookup(cluster.values, "memory", "1Gi")
}
EXTRA
`

// loadMember loads src as the configuration of fleet member on, which
// must load without error.
func loadMember(t *testing.T, src, on string) *config.Config {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{Cluster: on})
	if diags.HasErrors() {
		t.Fatalf("load for %s: %s", on, diags.Error())
	}
	return cfg
}

// limitsOf returns a ClusterQueue's borrowing and lending limits as
// "flavor/resource borrowingLimit=N" and "... lendingLimit=N".
func limitsOf(cq *unstructured.Unstructured) []string {
	var out []string
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			fm := f.(map[string]any)
			rs, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, r := range rs {
				rm := r.(map[string]any)
				for _, field := range []string{"borrowingLimit", "lendingLimit"} {
					if v, ok := rm[field].(string); ok && fm["name"] != "fleet.any-node" {
						out = append(out, fm["name"].(string)+"/"+rm["name"].(string)+" "+field+"="+v)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestMultiKueueManagerQuotaIsWorkersSum: the dispatched tenant's
// ClusterQueue on the manager has exactly the sum over its workers of the
// quota it has on each, per pool and resource, its borrowing and lending
// limits and its cpu and memory too, when cluster.values make the workers'
// quotas differ; with the manager's own figure for the tenant (hub's
// values) playing no part; and on a pure manager, with no pool placed on
// it, the tenant's GPU quota is there all the same, over a ResourceFlavor
// of the workers' pool and no node pool.
func TestMultiKueueManagerQuotaIsWorkersSum(t *testing.T) {
	hubValues := `values = { gpus = 1, borrow = 0, cpu = "1", memory = "1Gi" }`
	cases := []struct {
		name, hub, pool, extra string
		wantQuotas, wantLimits []string
		wantNodePools          int
	}{
		{
			name: "pool on every member, per-cluster values", hub: hubValues,
			wantQuotas:    []string{"fleet.any-node/cpu=6", "fleet.any-node/memory=16896Mi", "h100/nvidia.com/gpu=8"},
			wantLimits:    []string{"h100/nvidia.com/gpu borrowingLimit=3", "h100/nvidia.com/gpu lendingLimit=7"},
			wantNodePools: 1,
		},
		{
			name: "pure manager", pool: `clusters = ["east", "west"]`,
			wantQuotas: []string{"fleet.any-node/cpu=6", "fleet.any-node/memory=16896Mi", "h100/nvidia.com/gpu=8"},
			wantLimits: []string{"h100/nvidia.com/gpu borrowingLimit=3", "h100/nvidia.com/gpu lendingLimit=7"},
		},
		{
			// The tenant has a100 on west only: its flavor on the
			// manager holds west's quota alone, next to h100's sum.
			name: "a pool on one worker only", pool: `clusters = ["east", "west"]`,
			extra: "pool \"a100\" {\n  gpu = \"A100-80GB\"\n  clusters = [\"west\"]\n}\n" +
				"tenant \"infer\" {\n  dispatch = \"multikueue\"\n  quota \"a100\" {\n    gpus = 4\n  }\n}\n",
			wantQuotas: []string{"fleet.any-node/cpu=6", "fleet.any-node/memory=16896Mi", "h100/nvidia.com/gpu=8"},
			wantLimits: []string{"h100/nvidia.com/gpu borrowingLimit=3", "h100/nvidia.com/gpu lendingLimit=7"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.NewReplacer("HUB", c.hub, "POOL", c.pool, "EXTRA", c.extra).Replace(mkQuotaFleet)
			d := compileFleet(t, loadMember(t, src, "hub"))
			cq := ofKind(d, engine.KindClusterQueue)["train"]
			if cq == nil {
				t.Fatal("no ClusterQueue train on the manager")
			}
			if got := quotasOf(t, cq); !slices.Equal(got, c.wantQuotas) {
				t.Errorf("train's quotas on the manager %v, want %v", got, c.wantQuotas)
			}
			if got := limitsOf(cq); !slices.Equal(got, c.wantLimits) {
				t.Errorf("train's limits on the manager %v, want %v", got, c.wantLimits)
			}
			if _, ok := ofKind(d, engine.KindResourceFlavor)["h100"]; !ok {
				t.Error("no ResourceFlavor h100 on the manager for train's ClusterQueue to name")
			}
			if len(d.Pools) != c.wantNodePools {
				t.Errorf("node pools on the manager %v, want %d", d.Pools, c.wantNodePools)
			}
			if c.extra == "" {
				return
			}
			if got, want := quotasOf(t, ofKind(d, engine.KindClusterQueue)["infer"]), []string{"a100/nvidia.com/gpu=4", "fleet.any-node/cpu=1000000", "fleet.any-node/memory=1Pi"}; !slices.Equal(got, want) {
				t.Errorf("infer's quotas on the manager %v, want %v", got, want)
			}
			if _, ok := ofKind(d, engine.KindResourceFlavor)["a100"]; !ok {
				t.Error("no ResourceFlavor a100 on the manager for infer's ClusterQueue to name")
			}
		})
	}
}

// TestMultiKueueWorkersKeepTheirOwnQuota: on each worker the tenant's
// ClusterQueue has that worker's quota, not the sum.
func TestMultiKueueWorkersKeepTheirOwnQuota(t *testing.T) {
	src := strings.NewReplacer("HUB", "", "POOL", `clusters = ["east", "west"]`, "EXTRA", "").Replace(mkQuotaFleet)
	for on, want := range map[string][]string{
		"east": {"fleet.any-node/cpu=4", "fleet.any-node/memory=16Gi", "h100/nvidia.com/gpu=3"},
		"west": {"fleet.any-node/cpu=2", "fleet.any-node/memory=512Mi", "h100/nvidia.com/gpu=5"},
	} {
		d := compileFleet(t, loadMember(t, src, on))
		if got := quotasOf(t, ofKind(d, engine.KindClusterQueue)["train"]); !slices.Equal(got, want) {
			t.Errorf("train's quotas on %s %v, want %v", on, got, want)
		}
	}
}
