package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gpuform/gpuform"

// Limits from docs/architecture.md.
const (
	maxFileLines = 700
	maxFuncLines = 100
	maxCmdLines  = 2870
)

// longFuncs are the functions allowed over maxFuncLines: the source
// scanner, a single switch over every byte of a file.
var longFuncs = map[string]bool{
	"config/limits.go:scanSource": true,
}

// goFile is one parsed non-test Go file of the module.
type goFile struct {
	rel   string // path relative to the module root
	pkg   string // import path of its package
	lines int
	file  *ast.File
	fset  *token.FileSet
}

// moduleFiles parses every non-test Go file of the module outside testdata
// (the API-server harness and the benchmark driver are tools, not product).
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out []goFile
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || n == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, goFile{
			rel:   rel,
			pkg:   module + "/" + filepath.ToSlash(filepath.Dir(rel)),
			lines: strings.Count(string(src), "\n"),
			file:  f,
			fset:  fset,
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("found only %d Go files under %s", len(out), root)
	}
	return out
}

// within reports whether pkg is dir or a package below it.
func within(pkg, dir string) bool {
	dir = module + "/" + dir
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}

// TestDependenciesPointOneWay checks docs/architecture.md's rule: cmd ->
// engine, config, providers; providers -> engine; engine -> config; the
// root engine package (plan data) imports none of the jobs built on it, and
// what it is made of (capacity, kinds, dag, mig, api) does not import it; the
// leaves import nothing of gpuform's; render, which words what the pipeline
// returns, does not import the pipeline (engine/stack).
func TestDependenciesPointOneWay(t *testing.T) {
	rules := []struct {
		from   string
		banned []string
		leaf   bool
	}{
		{from: "config", banned: []string{"engine", "providers", "cmd", "api"}},
		{from: "engine", banned: []string{"providers", "cmd"}},
		{from: "providers", banned: []string{"cmd", "engine/render"}},
		{from: "engine/render", banned: []string{"engine/stack"}},
		{from: "api", leaf: true},
		{from: "engine/kinds", leaf: true},
		{from: "engine/dag", leaf: true},
		{from: "engine/mig", leaf: true},
		{from: "engine/alerting", leaf: true},
		{from: "internal", banned: []string{"cmd"}},
	}
	jobs := []string{"engine/compile", "engine/render", "engine/drift", "engine/stack"}
	// Below the plan data: what it is made of, and what may not import it.
	below := []string{"engine/capacity", "engine/kinds", "engine/dag", "engine/mig", "engine/alerting", "api"}
	checked := 0
	for _, f := range moduleFiles(t) {
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(path, module+"/") {
				continue
			}
			checked++
			for _, r := range rules {
				if !within(f.pkg, r.from) {
					continue
				}
				if r.leaf && path != f.pkg {
					t.Errorf("%s imports %s: %s is a leaf and imports nothing of gpuform's", f.rel, path, r.from)
				}
				for _, b := range r.banned {
					if within(path, b) {
						t.Errorf("%s imports %s: %s must not depend on %s", f.rel, path, r.from, b)
					}
				}
			}
			for _, b := range below {
				if within(f.pkg, b) && path == module+"/engine" {
					t.Errorf("%s imports %s: %s is below the plan data and must not import it", f.rel, path, b)
				}
			}
			if f.pkg == module+"/engine" {
				for _, j := range jobs {
					if within(path, j) {
						t.Errorf("%s imports %s: the plan data in engine must not depend on the jobs built on it", f.rel, path)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no import of a gpuform package was checked")
	}
}

// TestSizes keeps files and functions small enough to read in one sitting,
// and the command-line package to flags and output.
func TestSizes(t *testing.T) {
	cmdLines := 0
	for _, f := range moduleFiles(t) {
		if f.lines > maxFileLines {
			t.Errorf("%s has %d lines (at most %d): split it by job", f.rel, f.lines, maxFileLines)
		}
		if within(f.pkg, "cmd/gpuform") {
			cmdLines += f.lines
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "func literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			lines := f.fset.Position(body.End()).Line - f.fset.Position(body.Pos()).Line
			if lines > maxFuncLines && !longFuncs[f.rel+":"+name] {
				t.Errorf("%s:%d: %s has %d lines (at most %d)", f.rel, f.fset.Position(body.Pos()).Line, name, lines, maxFuncLines)
			}
			return true
		})
	}
	if cmdLines > maxCmdLines {
		t.Errorf("cmd/gpuform has %d lines of non-test code (at most %d): pipeline logic belongs in engine/stack", cmdLines, maxCmdLines)
	}
	if cmdLines == 0 {
		t.Error("found no code in cmd/gpuform")
	}
}
