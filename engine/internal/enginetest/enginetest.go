// Package enginetest holds the fixtures the tests of engine's sub-packages
// share: clusters as the API server would return them after an apply,
// example configurations, plans, and golden-file comparison. Only tests
// import it.
package enginetest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// Golden compares got with the file at path (relative to the test's
// package directory), or rewrites the file with got when update is set
// (each test package's -update flag). Its messages name the command that
// rewrites the package's golden files.
func Golden(t *testing.T, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s: %v (run %s)", path, err, updateCommand(t))
	}
	if string(want) != got {
		t.Errorf("%s differs from golden (%s to accept):\n--- got\n%s\n--- want\n%s", path, updateCommand(t), got, want)
	}
}

// GoldenFiles is Golden for the files under dir, bound to a test package's
// -update flag, so that each package keeps its own:
//
//	var update = flag.Bool("update", false, "rewrite golden files")
//	var golden = enginetest.GoldenFiles("testdata", update)
func GoldenFiles(dir string, update *bool) func(t *testing.T, name, got string) {
	return func(t *testing.T, name, got string) {
		t.Helper()
		Golden(t, filepath.Join(dir, name), got, *update)
	}
}

// updateCommand is "go test ./<package> -update" for the package under test
// (go test runs a test binary in its package's directory).
func updateCommand(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		return "go test -update"
	}
	rel, err := filepath.Rel(RepoRoot(t), wd)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "go test -update"
	}
	return "go test ./" + filepath.ToSlash(rel) + " -update"
}

// RepoRoot is the directory of the repository's go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("enginetest: cannot locate its own source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// LoadExample loads the configuration of examples/<dir> (its *.hcl files
// but the simulated cluster's *.sim.hcl), with optional text replacements
// (old, new pairs) in whichever file has them, and fails the test on any
// error diagnostic of loading or validation.
func LoadExample(t testing.TB, dir string, replace ...string) *config.Config {
	t.Helper()
	files := ExampleFiles(t, dir, replace...)
	cfg, diags := config.LoadSources(files, config.Options{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatalf("validate: %s", diags.Error())
	}
	return cfg
}

// ExampleFiles reads the configuration files of examples/<dir> (every
// *.hcl but *.sim.hcl) by name, with replacements (old, new pairs) made
// in whichever file has them; a replacement no file has fails the test.
func ExampleFiles(t testing.TB, dir string, replace ...string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(RepoRoot(t), "examples", dir, "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, ".sim.hcl") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(p)] = string(src)
	}
	if len(texts) == 0 {
		t.Fatalf("examples/%s has no configuration file", dir)
	}
	for i := 0; i+1 < len(replace); i += 2 {
		found := false
		for name, text := range texts {
			if strings.Contains(text, replace[i]) {
				texts[name], found = strings.ReplaceAll(text, replace[i], replace[i+1]), true
			}
		}
		if !found {
			t.Fatalf("example %s has no %q to replace", dir, replace[i])
		}
	}
	files := make(map[string][]byte, len(texts))
	for name, text := range texts {
		files[name] = []byte(text)
	}
	return files
}

// BankUnder returns the replacements (for LoadExample) that set the
// scheduler of examples/bank, written for Kueue, to scheduler, and, for
// another one, remove the arguments only Kueue reads (cohort,
// borrowing_limit, lending_limit), which validate refuses under it.
func BankUnder(scheduler string) []string {
	r := []string{`scheduler = "kueue"`, `scheduler = "` + scheduler + `"`}
	if scheduler == config.SchedulerKueue {
		return r
	}
	return append(r,
		`    borrowing_limit = { "3g.40gb" = 1 }`+"\n", "",
		`    lending_limit   = { "3g.40gb" = 0 }`+"\n", "",
		`  cohort           = "bank"`+"\n", "")
}

// LoadSource loads one main.hcl and fails the test on any error diagnostic
// of loading or validation.
func LoadSource(t testing.TB, src string) *config.Config {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatalf("validate: %s", diags.Error())
	}
	return cfg
}

// Quickstart compiles examples/quickstart.
func Quickstart(t testing.TB) *engine.Desired {
	t.Helper()
	d, err := compile.Compile(LoadExample(t, "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// MustDiff plans d against live and fails the test on an error.
func MustDiff(t testing.TB, d *engine.Desired, live *engine.Live, opts engine.DiffOptions) *engine.Plan {
	t.Helper()
	p, err := engine.Diff(d, live, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ServerCopy returns obj as the API server would store it after gpuform
// applied it: defaults filled in, status, resourceVersion and managedFields.
func ServerCopy(t testing.TB, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u := obj.DeepCopy()
	u.SetResourceVersion("42")
	u.SetUID(types.UID(fmt.Sprintf("uid-%x", sha256.Sum256([]byte(engine.KeyOf(obj).String())))[:40]))
	u.Object["status"] = map[string]any{"phase": "Active"}
	if u.GetKind() == "ValidatingAdmissionPolicy" {
		spec := u.Object["spec"].(map[string]any)
		mc := spec["matchConstraints"].(map[string]any)
		mc["matchPolicy"] = "Equivalent"
		for _, r := range mc["resourceRules"].([]any) {
			if rr := r.(map[string]any); rr["scope"] == nil {
				rr["scope"] = "*"
			}
		}
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: engine.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: u.GetAPIVersion(),
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fieldsV1(t, obj.Object)},
	}})
	return u
}

// fieldsV1 builds the managedFields tree of every leaf of obj.
func fieldsV1(t testing.TB, obj map[string]any) []byte {
	var tree func(m map[string]any) map[string]any
	tree = func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				out["f:"+k] = tree(sub)
			} else {
				out["f:"+k] = map[string]any{}
			}
		}
		return out
	}
	cp := k8sruntime.DeepCopyJSON(obj)
	delete(cp, "apiVersion")
	delete(cp, "kind")
	b, err := json.Marshal(tree(cp))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// EmptyLive is a cluster with nothing of the stack and the GPU Operator
// installed, its ClusterPolicy already pointing at gpuform's mig-parted
// ConfigMap, with MIG strategy mixed (the quickstart has no time-sliced
// pool).
func EmptyLive(t testing.TB) *engine.Live {
	spec := map[string]any{
		"migManager": map[string]any{"config": map[string]any{"name": engine.MIGPartedConfig}},
		"mig":        map[string]any{"strategy": engine.MIGStrategyMixed},
	}
	cp := &unstructured.Unstructured{Object: map[string]any{"apiVersion": engine.KindClusterPolicy.GroupVersion().String(), "kind": engine.KindClusterPolicy.Kind, "metadata": map[string]any{"name": "cluster-policy"}, "spec": spec}}
	return &engine.Live{Source: "test", ClusterPolicies: []*unstructured.Unstructured{ServerCopy(t, cp)}}
}

// Applied is the live state after the desired objects were applied.
func Applied(t testing.TB, d *engine.Desired) *engine.Live {
	live := EmptyLive(t)
	live.Objects, live.Foreign = map[engine.Key]*unstructured.Unstructured{}, map[engine.Key]*unstructured.Unstructured{}
	for _, o := range d.Objects {
		live.Objects[o.Key()] = ServerCopy(t, o.Object)
	}
	Record(live, d.Stack)
	return live
}

// Record gives live the record an apply by gpuform would have left
// (engine.Inventory): every object of live that Owned's rule gives stack,
// with its UID, commit stamp and address.
func Record(live *engine.Live, stack string) {
	inv := &engine.Inventory{Stack: stack, Objects: map[engine.Key]engine.InventoryEntry{}}
	for k, u := range live.Objects {
		if engine.Owned(u, stack) && !engine.IsLockNamespace(k) {
			a := u.GetAnnotations()
			inv.Objects[k] = engine.InventoryEntry{UID: string(u.GetUID()), Commit: a[engine.AnnotCommit], Address: a[engine.AnnotAddress]}
		}
	}
	live.Inventory = inv
}

// NodeFor is a Node carrying a pool's selector labels, as a cluster would have.
func NodeFor(p *engine.NodePool) *unstructured.Unstructured {
	labels := map[string]any{}
	for k, v := range p.Selector {
		labels[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "node-" + p.Pool, "labels": labels},
	}}
}

// GPUNode is a Node as GPU Feature Discovery labels it: node group, GPU
// product, GPU count and, when driver is set, the CUDA driver version.
func GPUNode(name, group, product string, count int, driver string) *unstructured.Unstructured {
	labels := map[string]any{
		"gpuform.dev/node-group": group,
		"nvidia.com/gpu.product": product,
		"nvidia.com/gpu.count":   strconv.Itoa(count),
	}
	if driver != "" {
		parts := strings.SplitN(driver, ".", 3)
		labels["nvidia.com/cuda.driver.major"] = parts[0]
		if len(parts) > 1 {
			labels["nvidia.com/cuda.driver.minor"] = parts[1]
		}
		if len(parts) > 2 {
			labels["nvidia.com/cuda.driver.rev"] = parts[2]
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "labels": labels},
	}}
}
