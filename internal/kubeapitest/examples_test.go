package kubeapitest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

func testContext() context.Context { return context.Background() }

// withoutKueueArguments removes from examples/bank the arguments only Kueue
// reads, which validate refuses under another scheduler.
var withoutKueueArguments = []string{
	`    borrowing_limit = { "3g.40gb" = 1 }` + "\n", "",
	`    lending_limit   = { "3g.40gb" = 0 }` + "\n", "",
	`  cohort           = "bank"` + "\n", "",
}

// exampleVariants are the examples as `gpuform render` compiles them:
// quickstart, bank under every scheduler and MIG backend, and shared with
// and without Kueue (the cases of engine/compile's TestCompileGolden), and
// dra (a DRA pool beside a device-plugin pool), orgtree (departments
// as Kueue Cohorts), and fleet as each of its members gets it.
var exampleVariants = []struct {
	name, example string
	replace       []string
	// cluster is the fleet member to compile for (config.Options.Cluster).
	cluster string
}{
	{"quickstart", "quickstart", nil, ""},
	{"bank-kueue", "bank", nil, ""},
	{"bank-none", "bank", append([]string{`scheduler = "kueue"`, `scheduler = "none"`}, withoutKueueArguments...), ""},
	{"bank-volcano", "bank", append([]string{`scheduler = "kueue"`, `scheduler = "volcano"`}, withoutKueueArguments...), ""},
	{"bank-agent", "bank", append([]string{`scheduler = "kueue"`, `mig_backend = "agent"`}, withoutKueueArguments...), ""},
	{"shared", "shared", nil, ""},
	{"shared-none", "shared", []string{`scheduler   = "kueue"`, `scheduler   = "none"`}, ""},
	{"isolation", "isolation", nil, ""},
	{"dra", "dra", nil, ""},
	{"orgtree", "orgtree", nil, ""},
	{"fleet-eu-train", "fleet", nil, "eu-train"},
	{"fleet-us-train", "fleet", nil, "us-train"},
	{"fleet-burst", "fleet", nil, "burst"},
}

// TestExamplesPassStrictValidation: every object each example compiles to
// (what `gpuform render` prints), and the patch of the GPU Operator's
// ClusterPolicy that plan adds, is accepted by a dry-run server-side apply
// with strict field validation against the upstream CRDs, with no warning
// at all.
func TestExamplesPassStrictValidation(t *testing.T) {
	applyAll(t)
	ctx := testContext()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	warnings := &kubeapitest.Warnings{}
	cfg.WarningHandler = warnings
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	if err := kubeapitest.CreateClusterPolicy(ctx, cfg, "cluster-policy"); err != nil {
		t.Fatal(err)
	}
	cp, err := dyn.Resource(schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}).Get(ctx, "cluster-policy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range exampleVariants {
		t.Run(v.name, func(t *testing.T) {
			d := compileExample(t, v.example, v.cluster, v.replace...)
			objs := make([]*unstructured.Unstructured, 0, len(d.Objects)+1)
			namespaces := []string{}
			for _, o := range d.Objects {
				objs = append(objs, o.Object)
				if ns := o.Object.GetNamespace(); ns != "" {
					namespaces = append(namespaces, ns)
				}
			}
			changes, _, err := engine.DiffClusterPolicies(d, &engine.Live{ClusterPolicies: []*unstructured.Unstructured{cp}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				objs = append(objs, c.After)
			}
			// A dry run of a namespaced object needs its namespace.
			if err := kubeapitest.CreateNamespaces(ctx, cfg, namespaces...); err != nil {
				t.Fatal(err)
			}
			before := len(warnings.All())
			for _, o := range objs {
				if err := dryRunApply(ctx, dyn, mapper, o); err != nil {
					t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
			}
			if w := warnings.All()[before:]; len(w) > 0 {
				t.Errorf("the API server warned:\n  %s", strings.Join(w, "\n  "))
			}
			if len(objs) < 10 {
				t.Errorf("only %d objects compiled", len(objs))
			}
		})
	}
}

// compileExample loads the configuration of examples/<name> (its *.hcl
// files but *.sim.hcl) with replacements, for fleet member cluster (none:
// a single cluster), validates and compiles it.
func compileExample(t *testing.T, name, cluster string, replace ...string) *engine.Desired {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "examples", name, "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	replaced := make([]bool, len(replace))
	for _, p := range paths {
		if strings.HasSuffix(p, ".sim.hcl") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		for i := 0; i+1 < len(replace); i += 2 {
			if strings.Contains(text, replace[i]) {
				text, replaced[i] = strings.ReplaceAll(text, replace[i], replace[i+1]), true
			}
		}
		files[filepath.Base(p)] = []byte(text)
	}
	for i := 0; i+1 < len(replace); i += 2 {
		if !replaced[i] {
			t.Fatalf("example %s has no %q", name, replace[i])
		}
	}
	cfg, diags := config.LoadSources(files, config.Options{Cluster: cluster})
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
	return d
}

// dryRunApply server-side applies o as gpuform does (field manager gpuform,
// force), with strict field validation and dryRun=All.
func dryRunApply(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: engine.FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
	ri := dyn.Resource(m.Resource)
	if ns := o.GetNamespace(); ns != "" {
		_, err = ri.Namespace(ns).Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
	} else {
		_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
	}
	return err
}
