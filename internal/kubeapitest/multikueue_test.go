package kubeapitest_test

import (
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// multiKueueManagerSource: a fleet whose manager hub has no pool, and two
// tenants, one with cpu and memory limits and a cohort, both dispatched by
// MultiKueue to east and west.
const multiKueueManagerSource = `
gpuform {
  stack     = "fleet"
  scheduler = "kueue"
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
  gpu      = "H100-80GB"
  clusters = ["east", "west"]
}

tenant "train" {
  dispatch = "multikueue"
  quota "h100" {
    gpus            = 2
    borrowing_limit = { gpus = 1 }
  }
  cohort = "fleet"
  cpu    = "8"
  memory = "32Gi"
}

tenant "infer" {
  dispatch = "multikueue"
  quota "h100" {
    gpus = 1
  }
  cohort = "fleet"
}
`

// TestMultiKueueObjectsPassStrictValidation: every object the manager of
// a fleet compiles to (its MultiKueueClusters, MultiKueueConfigs,
// AdmissionChecks and ClusterQueues with their admission checks and the
// workers' summed quotas, the ResourceFlavor of a pool not on the manager,
// and the rest) is accepted by a dry-run server-side apply with strict field
// validation against the upstream Kueue CRDs at the pinned version, with
// no warning at all.
func TestMultiKueueObjectsPassStrictValidation(t *testing.T) {
	applyAll(t)
	ctx := testContext()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(multiKueueManagerSource)}, config.Options{Cluster: "hub"})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatalf("validate: %s", diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	warnings := &kubeapitest.Warnings{}
	rc.WarningHandler = warnings
	dyn := dynamic.NewForConfigOrDie(rc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(rc)))
	var namespaces []string
	for _, o := range d.Objects {
		if ns := o.Object.GetNamespace(); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	if err := kubeapitest.CreateNamespaces(ctx, rc, namespaces...); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, o := range d.Objects {
		seen[o.Object.GetKind()]++
		if err := dryRunApply(ctx, dyn, mapper, o.Object); err != nil {
			t.Errorf("%s %s/%s: %v", o.Object.GetKind(), o.Object.GetNamespace(), o.Object.GetName(), err)
		}
	}
	if w := warnings.All(); len(w) > 0 {
		t.Errorf("the API server warned:\n  %s", strings.Join(w, "\n  "))
	}
	for kind, n := range map[string]int{
		engine.KindMKCluster.Kind: 2, engine.KindMKConfig.Kind: 2, engine.KindAdmissionCheck.Kind: 2, engine.KindClusterQueue.Kind: 2,
		// h100's, for the ClusterQueues to name on a manager without the
		// pool, and the any-node flavor of cpu and memory.
		engine.KindResourceFlavor.Kind: 2,
	} {
		if seen[kind] != n {
			t.Errorf("%d %s objects compiled, want %d", seen[kind], kind, n)
		}
	}
}
