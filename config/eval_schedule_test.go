package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// TestConcurrentEvaluationMatchesSerial loads every example, every invalid
// configuration case and generated configurations (valid, with errors in
// many blocks, for_each-shaped) once evaluating one block at a time and
// once on four goroutines, and requires the same Config and the same
// diagnostics in the same order. Run it with -race to check the sharing.
func TestConcurrentEvaluationMatchesSerial(t *testing.T) {
	type source struct {
		name  string
		files map[string][]byte
		// concurrent: the concurrent evaluation must be the one kept (the
		// configuration is large and spends no configuration-wide budget).
		concurrent bool
	}
	var sources []source
	dirs, err := filepath.Glob(filepath.Join("..", "examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	invalid, err := filepath.Glob(filepath.Join("..", "testdata", "config", "invalid", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(dirs, invalid...) {
		files := readHCL(t, dir)
		if len(files) > 0 {
			sources = append(sources, source{name: dir, files: files})
		}
	}
	if len(sources) < 60 {
		t.Fatalf("found only %d configurations", len(sources))
	}
	for _, o := range []gen.Options{
		{Tenants: 60, Models: 300},
		{Tenants: 60, Models: 300, ForEach: true},
		{Tenants: 40, Models: 200, Nodes: 5, ChangePercent: 10},
	} {
		src, err := gen.Generate(o)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("gen-%d-%d-foreach-%v", o.Tenants, o.Models, o.ForEach)
		sources = append(sources, source{name: name, files: map[string][]byte{"main.hcl": src}, concurrent: true})
		if o.ForEach {
			continue
		}
		// Errors in many blocks, evaluated on different goroutines: an
		// unknown priority in every tenth model, a wrong type in every
		// seventh tenant.
		bad := breakEvery(string(src), "  priority ", 10, "  priority = priority.nope\n")
		bad = breakEvery(bad, "  weight ", 7, "  weight = \"heavy\"\n")
		if bad == string(src) {
			t.Fatalf("%s: no block was broken", name)
		}
		sources = append(sources, source{name: name + "-errors", files: map[string][]byte{"main.hcl": []byte(bad)}, concurrent: true})
	}
	for _, s := range sources {
		t.Run(s.name, func(t *testing.T) {
			serialCfg, serialDiags, sl := loadFS(mapFS(s.files), Options{workers: 1})
			for range 3 {
				cfg, diags, l := loadFS(mapFS(s.files), Options{workers: 4})
				if got, want := diagLines(diags), diagLines(serialDiags); !reflect.DeepEqual(got, want) {
					t.Fatalf("diagnostics differ:\nconcurrent:\n%s\nserial:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if !reflect.DeepEqual(cfg, serialCfg) {
					t.Fatal("the configurations differ")
				}
				if l == nil || sl == nil || sl.concurrent {
					t.Fatal("the serial load evaluated concurrently")
				}
				if s.concurrent && !l.concurrent {
					t.Fatal("the concurrent evaluation was not kept")
				}
			}
		})
	}
}

// TestForIterationsBudgetConcurrently: the block named by the diagnostic of
// a spent budget does not depend on which goroutine spent it.
func TestForIterationsBudgetConcurrently(t *testing.T) {
	// Three locals that each iterate 80,400 elements: the third (in
	// declaration order) goes over MaxForIterations one block at a time;
	// concurrently any may, so the evaluation is redone one at a time.
	src := hostileHead + "locals {\n  a = [for a in range(400) : [for b in range(200) : b]]\n  b = [for a in range(400) : [for b in range(200) : b]]\n  c = [for a in range(400) : [for b in range(200) : b]]\n}\n"
	for range 3 {
		_, diags, l := loadFS(mapFS(map[string][]byte{"main.hcl": []byte(src)}), Options{workers: 4})
		if l.concurrent {
			t.Fatal("the concurrent evaluation that spent the budget was kept")
		}
		if len(diags) != 1 || diags[0].Subject == nil || diags[0].Subject.Start.Line != 7 || !strings.Contains(diags[0].Detail, "MaxForIterations") {
			t.Fatalf("want one MaxForIterations error at line 7 (local c), got:\n%s", strings.Join(diagLines(diags), "\n"))
		}
	}
}

func readHCL(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = src
	}
	return files
}

func mapFS(files map[string][]byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: src, Mode: 0o444}
	}
	return fsys
}

// breakEvery replaces every n-th line that starts with prefix by repl.
func breakEvery(src, prefix string, n int, repl string) string {
	lines := strings.SplitAfter(src, "\n")
	seen := 0
	for i, line := range lines {
		if strings.HasPrefix(line, prefix) {
			if seen%n == 0 {
				lines[i] = repl
			}
			seen++
		}
	}
	return strings.Join(lines, "")
}

func diagLines(diags hcl.Diagnostics) []string {
	out := make([]string, len(diags))
	for i, d := range diags {
		at := ""
		if d.Subject != nil {
			at = d.Subject.String()
		}
		out[i] = fmt.Sprintf("%s: %s: %s", at, d.Summary, d.Detail)
	}
	return out
}

// TestEvalBytesBudgetConcurrently: the block named by the diagnostic of a
// spent MaxEvalBytes does not depend on which goroutine spent it.
func TestEvalBytesBudgetConcurrently(t *testing.T) {
	// Three locals that each compare a 10 MiB string 45 times (450 MiB):
	// the third (in declaration order) goes over MaxEvalBytes one block at
	// a time; concurrently any may, so the evaluation is redone one at a
	// time.
	files := map[string][]byte{
		"big.txt":  []byte(strings.Repeat("x", 10<<20)),
		"main.hcl": []byte(hostileHead + "locals {\n  s = file(\"big.txt\")\n  a = [for i in range(45) : local.s == \"\"]\n  b = [for i in range(45) : local.s == \"\"]\n  c = [for i in range(45) : local.s == \"\"]\n}\n"),
	}
	for range 3 {
		_, diags, l := loadFS(mapFS(files), Options{workers: 4})
		if l.concurrent {
			t.Fatal("the concurrent evaluation that spent the budget was kept")
		}
		if len(diags) != 1 || diags[0].Subject == nil || diags[0].Subject.Start.Line != 8 || !strings.Contains(diags[0].Detail, "MaxEvalBytes") || !strings.Contains(diags[0].Detail, "in local.c;") {
			t.Fatalf("want one MaxEvalBytes error at line 8 (local c), got:\n%s", strings.Join(diagLines(diags), "\n"))
		}
	}
}

// TestSyntaxFreedAsEvaluated: once a configuration is loaded, serially or
// concurrently, no block keeps its syntax and every file is an outline, so
// the load never holds the whole syntax tree beside the typed model.
func TestSyntaxFreedAsEvaluated(t *testing.T) {
	src := bigConfig(bigHead, 800, "")
	for _, workers := range []int{1, 4} {
		cfg, diags, l := loadFS(mapFS(map[string][]byte{"main.hcl": src}), Options{workers: workers})
		if diags.HasErrors() {
			t.Fatalf("workers %d: %s", workers, strings.Join(diagLines(diags), "\n"))
		}
		if workers > 1 && !l.concurrent {
			t.Fatalf("workers %d: not evaluated concurrently", workers)
		}
		for _, n := range l.order {
			if n.block != nil || n.expr != nil {
				t.Fatalf("workers %d: %s kept its syntax after evaluation", workers, n.addr)
			}
		}
		if _, ok := cfg.Files["main.hcl"].Nav.(outline); !ok {
			t.Fatalf("workers %d: the file kept its syntax tree", workers)
		}
	}
}
