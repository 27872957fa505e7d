package arch

import (
	"go/ast"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// provider is the provider a package belongs to (providers/<name>), or ""
// outside providers.
func provider(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/providers/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// TestProvidersIndependent checks that no provider imports another: each
// talks to one outside system, and what two of them share (the agent's node
// types, its wire formats) lives in api/ or engine/, where both read it.
// A caller that needs two providers together (the simulated cluster driving
// the agent's MIG logic) joins them in cmd.
func TestProvidersIndependent(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range moduleFiles(t) {
		from := provider(f.pkg)
		if from == "" {
			continue
		}
		seen[from] = true
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if to := provider(path); to != "" && to != from {
				t.Errorf("%s imports %s: provider %s must not import provider %s", f.rel, path, from, to)
			}
		}
	}
	if len(seen) < 2 {
		t.Fatalf("found the files of %d providers, want them all", len(seen))
	}
}

// unsafeAllowed are the non-test files that may import unsafe, each with
// why. Keep it exact: a file that no longer needs unsafe leaves the list.
// It is empty: gpuform does without unsafe.
var unsafeAllowed = map[string]string{}

// TestUnsafeAllowList checks that no non-test file imports unsafe outside
// unsafeAllowed, and that every file the list names still does.
func TestUnsafeAllowList(t *testing.T) {
	var importing []string
	for _, f := range moduleFiles(t) {
		for _, imp := range f.file.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path != "unsafe" {
				continue
			}
			importing = append(importing, f.rel)
			if _, ok := unsafeAllowed[f.rel]; !ok {
				t.Errorf("%s imports unsafe: gpuform does without it (only the files in unsafeAllowed may, each with its reason)", f.rel)
			}
		}
	}
	for rel := range unsafeAllowed {
		if !slices.Contains(importing, rel) {
			t.Errorf("%s is in unsafeAllowed but does not import unsafe (or no longer exists): take it off the list", rel)
		}
	}
}

// runtimeTuners are the runtime/debug functions that change process-wide
// collector settings, and runtimeTuning the one file that may call them:
// main sets a container's soft memory limit once through it. A library
// planning several stacks in one process must not change them under its
// caller.
var (
	runtimeTuners = map[string]bool{"SetGCPercent": true, "SetMemoryLimit": true, "SetMaxHeap": true}
	runtimeTuning = "internal/memlimit/memlimit.go"
)

// TestNoRuntimeTuning checks that no non-test file but runtimeTuning
// changes the collector's settings.
func TestNoRuntimeTuning(t *testing.T) {
	found := false
	for _, f := range moduleFiles(t) {
		name := ""
		for _, imp := range f.file.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "runtime/debug" {
				name = "debug"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !runtimeTuners[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != name {
				return true
			}
			if f.rel == runtimeTuning {
				found = true
				return true
			}
			t.Errorf("%s:%d: debug.%s changes a process-wide setting: only %s may, once, for main", f.rel, f.fset.Position(sel.Pos()).Line, sel.Sel.Name, runtimeTuning)
			return true
		})
	}
	if !found {
		t.Errorf("%s sets no runtime setting: the check looks for the wrong file or names", runtimeTuning)
	}
}
