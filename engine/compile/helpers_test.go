package compile_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
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
		t.Fatalf("read golden %s: %v (run go test -update)", path, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from golden (go test ./engine/compile -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// loadExample loads an example directory, with optional text replacements
// in its main.hcl, and fails the test on any error diagnostic.
func loadExample(t testing.TB, dir string, replace ...string) *config.Config {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			t.Fatalf("example %s has no %q to replace", dir, replace[i])
		}
		text = strings.ReplaceAll(text, replace[i], replace[i+1])
	}
	return loadSource(t, text)
}

// loadSource loads one main.hcl and validates it, failing the test on any
// error diagnostic.
func loadSource(t testing.TB, src string) *config.Config {
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

// nodeFor is a Node carrying a pool's selector labels, as a cluster would have.
func nodeFor(p *engine.NodePool) *unstructured.Unstructured {
	labels := map[string]any{}
	for k, v := range p.Selector {
		labels[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "node-" + p.Pool, "labels": labels},
	}}
}
