package engine_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
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
		t.Errorf("%s differs from golden (go test ./engine -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// loadExample loads an example directory, with optional text replacements
// in its main.hcl, and fails the test on any error diagnostic.
func loadExample(t testing.TB, dir string, replace ...string) *config.Config {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", dir, "main.hcl"))
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
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(text)}, config.Options{})
	if diags.HasErrors() {
		t.Fatalf("load %s: %s", dir, diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatalf("validate %s: %s", dir, diags.Error())
	}
	return cfg
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
