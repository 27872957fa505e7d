package compile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// mkSource is a fleet whose tenants train and infer are dispatched by
// MultiKueue from the manager hub to the workers east and west (with their
// kubeconfig Secrets): each has 2 H100s and 8 cpu on each worker. SCHED is
// the scheduler.
const mkSource = `
gpuform {
  stack     = "fleet"
  scheduler = "SCHED"
}

cluster "hub" {
  role = "manager"
}

cluster "east" {
  kubeconfig_secret = "east-kubeconfig"
}

cluster "west" {
  kubeconfig_secret = "west-kubeconfig"
}

pool "h100" {
  gpu = "H100-80GB"
}

tenant "train" {
  dispatch = "multikueue"
  quota "h100" {
    gpus = 2
  }
  cpu    = "8"
  memory = "32Gi"
}

tenant "infer" {
  dispatch = "multikueue"
  quota "h100" {
    gpus = 1
  }
}
`

// mkFleet loads mkSource under sched as the configuration of the fleet
// member named on. edit, when set, changes it before validation.
func mkFleet(t *testing.T, sched, on string, edit func(*config.Config)) *config.Config {
	t.Helper()
	cfg := loadMember(t, strings.ReplaceAll(mkSource, "SCHED", sched), on)
	if edit != nil {
		edit(cfg)
	}
	return cfg
}

// compileFleet validates and compiles cfg, which must be valid.
func compileFleet(t *testing.T, cfg *config.Config) *engine.Desired {
	t.Helper()
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatalf("validate: %s", diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ofKind returns the desired objects of kind k by name.
func ofKind(d *engine.Desired, k engine.Kind) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range d.Objects {
		if o.Object.GroupVersionKind().GroupKind() == k.GroupKind() {
			out[o.Object.GetName()] = o.Object
		}
	}
	return out
}

func str(t *testing.T, u *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, _, err := unstructured.NestedString(u.Object, path...)
	if err != nil {
		t.Fatalf("%s %s: %v", u.GetName(), strings.Join(path, "."), err)
	}
	return v
}

// quotasOf returns a ClusterQueue's nominal quotas as "flavor/resource=quota".
func quotasOf(t *testing.T, cq *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			fm := f.(map[string]any)
			rs, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, r := range rs {
				rm := r.(map[string]any)
				out = append(out, fm["name"].(string)+"/"+rm["name"].(string)+"="+rm["nominalQuota"].(string))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestMultiKueueOnTheManager: on the manager each dispatched tenant has a
// ClusterQueue carrying its MultiKueue AdmissionCheck with the quota its
// two workers give it together, the AdmissionCheck's MultiKueueConfig
// lists the workers, each worker has one MultiKueueCluster (shared by both
// tenants) naming its Secret.
func TestMultiKueueOnTheManager(t *testing.T) {
	d := compileFleet(t, mkFleet(t, "kueue", "hub", nil))
	cqs, acs, mkcs := ofKind(d, engine.KindClusterQueue), ofKind(d, engine.KindAdmissionCheck), ofKind(d, engine.KindMKConfig)
	for _, tenant := range []string{"train", "infer"} {
		ns := tenant
		cq, ac, mkc := cqs[ns], acs[ns], mkcs[ns]
		if cq == nil || ac == nil || mkc == nil {
			t.Fatalf("%s: ClusterQueue %v, AdmissionCheck %v, MultiKueueConfig %v; want all three named %s", tenant, cq != nil, ac != nil, mkc != nil, ns)
		}
		checks, _, _ := unstructured.NestedSlice(cq.Object, "spec", "admissionChecksStrategy", "admissionChecks")
		if len(checks) != 1 || checks[0].(map[string]any)["name"] != ns {
			t.Errorf("%s: ClusterQueue admission checks %v, want [%s]", tenant, checks, ns)
		}
		if got := str(t, ac, "spec", "controllerName"); got != "kueue.x-k8s.io/multikueue" {
			t.Errorf("%s: controllerName %q", tenant, got)
		}
		if k, n := str(t, ac, "spec", "parameters", "kind"), str(t, ac, "spec", "parameters", "name"); k != "MultiKueueConfig" || n != ns {
			t.Errorf("%s: parameters %s %s, want MultiKueueConfig %s", tenant, k, n, ns)
		}
		clusters, _, _ := unstructured.NestedStringSlice(mkc.Object, "spec", "clusters")
		if !slices.Equal(clusters, []string{"east", "west"}) {
			t.Errorf("%s: MultiKueueConfig clusters %v, want [east west]", tenant, clusters)
		}
	}
	// Two workers: twice each worker's quota.
	want := []string{"fleet.any-node/cpu=16", "fleet.any-node/memory=64Gi", "h100/nvidia.com/gpu=4"}
	if got := quotasOf(t, cqs["train"]); !slices.Equal(got, want) {
		t.Errorf("train's ClusterQueue quotas %v, want %v", got, want)
	}
	clusters := ofKind(d, engine.KindMKCluster)
	if len(clusters) != 2 {
		t.Fatalf("MultiKueueClusters %v, want east and west once each", clusters)
	}
	for name, secret := range map[string]string{"east": "east-kubeconfig", "west": "west-kubeconfig"} {
		c := clusters[name]
		if c == nil {
			t.Fatalf("no MultiKueueCluster %s", name)
		}
		if typ, loc := str(t, c, "spec", "clusterSource", "kubeConfig", "locationType"), str(t, c, "spec", "clusterSource", "kubeConfig", "location"); typ != "Secret" || loc != secret {
			t.Errorf("MultiKueueCluster %s reads %s %q, want Secret %q", name, typ, loc, secret)
		}
	}
	for _, o := range d.Objects {
		if o.Object.GetKind() == "Secret" {
			t.Errorf("gpuform writes Secret %s: it must only name the kubeconfig Secret", o.Object.GetName())
		}
	}
}

// TestMultiKueueOnAWorker: the configuration compiled for a worker has the
// tenants' ordinary queues and the pools, and nothing of MultiKueue.
func TestMultiKueueOnAWorker(t *testing.T) {
	d := compileFleet(t, mkFleet(t, "kueue", "east", nil))
	if len(d.Pools) != 1 {
		t.Errorf("the worker has node pools %v, want h100", d.Pools)
	}
	for _, k := range []engine.Kind{engine.KindAdmissionCheck, engine.KindMKConfig, engine.KindMKCluster} {
		if objs := ofKind(d, k); len(objs) > 0 {
			t.Errorf("a worker has %s objects %v", k.Kind, objs)
		}
	}
	cq := ofKind(d, engine.KindClusterQueue)["train"]
	if _, ok, _ := unstructured.NestedFieldNoCopy(cq.Object, "spec", "admissionChecksStrategy"); ok {
		t.Error("a worker's ClusterQueue carries an admission check")
	}
	want := []string{"fleet.any-node/cpu=8", "fleet.any-node/memory=32Gi", "h100/nvidia.com/gpu=2"}
	if got := quotasOf(t, cq); !slices.Equal(got, want) {
		t.Errorf("train's ClusterQueue quotas on a worker %v, want %v", got, want)
	}
}

// TestMultiKueueValidation: each broken fleet is refused with one clear
// error before any cluster call.
func TestMultiKueueValidation(t *testing.T) {
	member := func(cfg *config.Config, name string) *config.Cluster {
		for _, m := range cfg.Fleet {
			if m.Name == name {
				return m
			}
		}
		t.Fatalf("no member %s", name)
		return nil
	}
	onlyTrain := func(cfg *config.Config) { cfg.Tenants[1].Dispatch, cfg.Tenants[1].Clusters = "", nil }
	cases := []struct {
		name, sched, summary string
		edit                 func(*config.Config)
	}{
		{"no manager", "kueue", "No MultiKueue manager", func(cfg *config.Config) {
			onlyTrain(cfg)
			member(cfg, "hub").Role = ""
		}},
		{"two managers", "kueue", "More than one MultiKueue manager", func(cfg *config.Config) {
			onlyTrain(cfg)
			member(cfg, "west").Role = config.RoleManager
		}},
		{"worker without kubeconfig_secret", "kueue", "Worker without kubeconfig_secret", func(cfg *config.Config) {
			onlyTrain(cfg)
			member(cfg, "west").KubeconfigSecret = ""
		}},
		{"kubeconfig_secret not a Secret name", "kueue", "Invalid Kubernetes name", func(cfg *config.Config) {
			onlyTrain(cfg)
			member(cfg, "west").KubeconfigSecret = "West_Config"
		}},
		{"scheduler none", "none", "MultiKueue needs Kueue", onlyTrain},
		{"scheduler volcano", "volcano", "MultiKueue needs Kueue", onlyTrain},
		{"unknown cluster", "kueue", "Unknown cluster", func(cfg *config.Config) {
			onlyTrain(cfg)
			cfg.Tenants[0].Clusters = append(cfg.Tenants[0].Clusters, "south")
		}},
		{"no worker", "kueue", "No MultiKueue worker", func(cfg *config.Config) {
			onlyTrain(cfg)
			cfg.Tenants[0].Clusters = []string{"hub"}
		}},
		{"unknown dispatch", "kueue", "Unknown dispatch", func(cfg *config.Config) {
			onlyTrain(cfg)
			cfg.Tenants[0].Dispatch = "broadcast"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mkFleet(t, c.sched, "hub", c.edit)
			var errs hcl.Diagnostics
			for _, d := range compile.Validate(cfg, mig.Default()) {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 || errs[0].Summary != c.summary {
				t.Fatalf("errors %q, want one %q", errs.Error(), c.summary)
			}
		})
	}
}
