package kubeapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// CRDDir returns testdata/crds at the repository root: the committed
// upstream CRDs, and the Go module (go.mod, go.sum) that pins the versions
// of those read from the Go module cache.
func CRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "crds")
}

// crdSource says where one set of upstream CRDs comes from.
type crdSource struct {
	// Module is the Go module that ships the CRDs, at the version
	// testdata/crds/go.mod requires; empty for a copy committed in
	// testdata/crds.
	Module string
	// Paths are files, or directories whose every *.yaml is taken, in the
	// module (or in testdata/crds).
	Paths []string
}

// crdSources are the sets ApplyCRDs and CRDs take, by name
// (testdata/crds/README.md says which release each is).
func crdSources() map[string]crdSource {
	return map[string]crdSource{
		"kueue":        {Module: "sigs.k8s.io/kueue", Paths: []string{"config/components/crd/bases"}},
		"gpu-operator": {Module: "github.com/NVIDIA/gpu-operator", Paths: []string{"deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml", "deployments/gpu-operator/crds/nvidia.com_nvidiadrivers.yaml"}},
		// GPU Operator v26.7's GPUCluster, its DRA stack: a committed copy,
		// the pinned module being v25.3.
		"gpu-operator-dra": {Paths: []string{"gpu-operator-dra.yaml"}},
		"kserve":           {Paths: []string{"kserve.yaml"}},
		// The Prometheus Operator's PrometheusRule, from the root module's
		// example/prometheus-operator-crd (what its bundle.yaml installs).
		"prometheus-operator": {Module: "github.com/prometheus-operator/prometheus-operator", Paths: []string{"example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml"}},
		"volcano":             {Paths: []string{"volcano.yaml"}},
	}
}

// CRDSets returns the names of the sets of upstream CRDs, sorted.
func CRDSets() []string {
	var names []string
	for n := range crdSources() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CRDs returns the upstream CRDs of a set: "kueue", "gpu-operator",
// "gpu-operator-dra", "prometheus-operator", "kserve" or "volcano" (a
// ".yaml" suffix is ignored). Kueue's, the GPU Operator's and the
// Prometheus Operator's are read from the Go module cache (see
// ModuleDir), the GPUCluster's, KServe's and Volcano's
// from their committed copies in testdata/crds.
func CRDs(ctx context.Context, set string) ([]*unstructured.Unstructured, error) {
	set = strings.TrimSuffix(set, ".yaml")
	src, ok := crdSources()[set]
	if !ok {
		return nil, fmt.Errorf("no CRD set %q; the sets are %s", set, strings.Join(CRDSets(), ", "))
	}
	root := CRDDir()
	if src.Module != "" {
		dir, err := ModuleDir(ctx, src.Module)
		if err != nil {
			return nil, err
		}
		root = dir
	}
	var out []*unstructured.Unstructured
	for _, p := range src.Paths {
		files, err := yamlFiles(filepath.Join(root, p))
		if err != nil {
			return nil, fmt.Errorf("CRD set %s: %w", set, err)
		}
		for _, f := range files {
			objs, err := ReadYAML(f)
			if err != nil {
				return nil, fmt.Errorf("CRD set %s: %w", set, err)
			}
			out = append(out, objs...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CRD set %s: no CRDs in %s", set, strings.Join(src.Paths, ", "))
	}
	return out, nil
}

// yamlFiles is path itself, or the *.yaml files of a directory, sorted.
func yamlFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.yaml"))
	sort.Strings(files)
	return files, err
}

// ModuleDir returns the directory of module in the Go module cache, at the
// version testdata/crds/go.mod requires, checked against testdata/crds/go.sum.
// It runs `go mod download -json module` there: a lookup once the module
// cache has the module, a download from the Go module proxy before.
func ModuleDir(ctx context.Context, module string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.CommandContext(ctx, goBin, "mod", "download", "-json", module)
	cmd.Dir = CRDDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var info struct{ Path, Version, Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Error != "" || runErr != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s in %s: %v %s %s", module, cmd.Dir, runErr, info.Error, strings.TrimSpace(stderr.String()))
	}
	return info.Dir, nil
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdWait is how long ApplyCRDs waits for the CRDs to be served: KServe's
// 2 MB schema takes the API server a few seconds on a loaded machine.
const crdWait = 90 * time.Second

// ApplyCRDs applies the upstream CRDs of the named sets (see CRDs: "kueue",
// "gpu-operator", "kserve", "volcano"; "kueue.yaml" works too) with
// server-side apply and waits until every CRD is Established, discovery
// serves each of its versions and a LIST of each succeeds.
func ApplyCRDs(ctx context.Context, cfg *rest.Config, sets ...string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var crds []*unstructured.Unstructured
	for _, s := range sets {
		objs, err := CRDs(ctx, s)
		if err != nil {
			return err
		}
		crds = append(crds, objs...)
	}
	for _, o := range crds {
		if _, err := dyn.Resource(crdGVR).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "kubeapitest", Force: true}); err != nil {
			return fmt.Errorf("apply CRD %s: %w", o.GetName(), err)
		}
	}
	return WaitForCRDs(ctx, cfg, crds...)
}

// WaitForCRDs waits until every CRD is Established, discovery serves each
// of its served versions (per group and in the aggregated list) and a
// LIST of each succeeds, so that clients made next see the whole API. Each
// poll asks once for all the CRDs: one LIST of the CRDs, one discovery
// document per group version and one aggregated list.
func WaitForCRDs(ctx context.Context, cfg *rest.Config, crds ...*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(crdWait)
	// wait polls missing until it names nothing.
	wait := func(what string, missing func() []string) error {
		for {
			m := missing()
			if len(m) == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s after %s: %s", what, crdWait, strings.Join(m, ", "))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if err := wait("CRDs not established", func() []string { return notEstablished(ctx, dyn, crds) }); err != nil {
		return err
	}
	kinds := servedKinds(crds)
	if err := wait("discovery does not serve", func() []string { return notServed(dc, kinds) }); err != nil {
		return err
	}
	// The first LISTs of a new CRD may be answered 503 Retry-After while
	// its storage starts.
	return wait("not listable", func() []string {
		var out []string
		for _, k := range kinds {
			if _, err := dyn.Resource(k.gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				out = append(out, k.gvr.String())
			}
		}
		return out
	})
}

// servedKind is a served version of a CRD: its resource and kind.
type servedKind struct {
	gvr  schema.GroupVersionResource
	kind string
}

// servedKinds lists the served versions of crds.
func servedKinds(crds []*unstructured.Unstructured) []servedKind {
	var out []servedKind
	for _, c := range crds {
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
		versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			name, _ := vm["name"].(string)
			if isServed, _ := vm["served"].(bool); isServed {
				out = append(out, servedKind{gvr: schema.GroupVersionResource{Group: group, Version: name, Resource: plural}, kind: kind})
			}
		}
	}
	return out
}

// notEstablished names the CRDs among crds that one LIST of the cluster's
// CRDs does not show Established (all of them when the LIST fails).
func notEstablished(ctx context.Context, dyn dynamic.Interface, crds []*unstructured.Unstructured) []string {
	ok := map[string]bool{}
	if list, err := dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range list.Items {
			ok[list.Items[i].GetName()] = established(&list.Items[i])
		}
	}
	var out []string
	for _, c := range crds {
		if !ok[c.GetName()] {
			out = append(out, c.GetName())
		}
	}
	return out
}

// notServed names the kinds that discovery does not list in their group
// version, in the per-group document or in the aggregated /apis list.
func notServed(dc *discovery.DiscoveryClient, kinds []servedKind) []string {
	perGroup := map[string]map[string]bool{}
	for _, k := range kinds {
		gv := k.gvr.GroupVersion().String()
		if _, done := perGroup[gv]; done {
			continue
		}
		perGroup[gv] = map[string]bool{}
		if rl, err := dc.ServerResourcesForGroupVersion(gv); err == nil {
			for _, r := range rl.APIResources {
				perGroup[gv][r.Kind] = true
			}
		}
	}
	aggregated := map[string]bool{}
	if _, lists, err := dc.ServerGroupsAndResources(); err == nil {
		for _, l := range lists {
			for _, r := range l.APIResources {
				aggregated[l.GroupVersion+" "+r.Kind] = true
			}
		}
	}
	var out []string
	for _, k := range kinds {
		gv := k.gvr.GroupVersion().String()
		if !perGroup[gv][k.kind] || !aggregated[gv+" "+k.kind] {
			out = append(out, k.kind+" "+gv)
		}
	}
	return out
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
