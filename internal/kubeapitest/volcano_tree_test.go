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

// volcanoTreeSource: an organisation tree under Volcano, ai holding
// research (which may borrow 2) and product, a tenant in each, and one
// tenant outside the tree with cpu and memory.
const volcanoTreeSource = `
gpuform {
  stack     = "org"
  scheduler = "volcano"
}

pool "a100" {
  gpu = "A100-80GB"
}

department "ai" {
  quota "a100" {
    gpus = 4
  }
}

department "research" {
  parent = department.ai
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 2 }
  }
}

department "product" {
  parent = department.ai
}

tenant "alpha" {
  department = department.research
  quota "a100" {
    gpus = 2
  }
  cpu    = "8"
  memory = "32Gi"
}

tenant "gamma" {
  department = department.product
  quota "a100" {
    gpus = 2
  }
}

tenant "solo" {
  quota "a100" {
    gpus = 1
  }
}
`

// TestVolcanoTreeQueuesPassStrictValidation: every Queue of a Volcano
// organisation tree (departments' Queues with parent, deserved and
// capability; tenants' leaf Queues) and the rest of the stack is accepted
// by a dry-run server-side apply with strict field validation against the
// pinned Volcano Queue CRD (v1.15.1), with no warning at all.
func TestVolcanoTreeQueuesPassStrictValidation(t *testing.T) {
	applyAll(t)
	ctx := testContext()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(volcanoTreeSource)}, config.Options{})
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
	queues := 0
	for _, o := range d.Objects {
		if o.Object.GetKind() == engine.KindVolcanoQueue.Kind {
			queues++
		}
		if err := dryRunApply(ctx, dyn, mapper, o.Object); err != nil {
			t.Errorf("%s %s/%s: %v", o.Object.GetKind(), o.Object.GetNamespace(), o.Object.GetName(), err)
		}
	}
	if w := warnings.All(); len(w) > 0 {
		t.Errorf("the API server warned:\n  %s", strings.Join(w, "\n  "))
	}
	if queues != 6 { // ai, research, product, alpha, gamma, solo
		t.Errorf("%d Queues compiled, want 6", queues)
	}
}
