package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"

	"github.com/gpuform/gpuform/engine/kinds"
)

// registeredGroups are the non-core API groups of the builtin registry.
func registeredGroups() map[string]bool {
	out := map[string]bool{}
	for _, e := range kinds.Builtin().Entries() {
		if e.Group != "" {
			out[e.Group] = true
		}
	}
	return out
}

// apiVersionRE matches an apiVersion: group/version, with a Kubernetes
// version (v1, v1beta2, v1alpha1).
var apiVersionRE = regexp.MustCompile(`^([a-z0-9.-]+)/v[0-9]+((alpha|beta)[0-9]+)?$`)

// handWritten returns the string literals of f that name a registered
// group ("kueue.x-k8s.io") or one of its apiVersions ("kueue.x-k8s.io/v1beta2"):
// those come from the registry (engine/kinds), so that a version bump is one
// line of it. A label or annotation key under a group's prefix
// ("kueue.x-k8s.io/queue-name") is neither.
func handWritten(fset *token.FileSet, f *ast.File, groups map[string]bool) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if m := apiVersionRE.FindStringSubmatch(s); groups[s] || (m != nil && groups[m[1]]) {
			out = append(out, fset.Position(lit.Pos()).String()+": "+lit.Value)
		}
		return true
	})
	return out
}

// TestNoHandWrittenAPIVersions fails when a non-test file outside
// engine/kinds writes a registered group or apiVersion by hand.
func TestNoHandWrittenAPIVersions(t *testing.T) {
	groups := registeredGroups()
	if len(groups) < 5 {
		t.Fatalf("the registry has only %d groups", len(groups))
	}
	for _, f := range moduleFiles(t) {
		if within(f.pkg, "engine/kinds") {
			continue
		}
		for _, at := range handWritten(f.fset, f.file, groups) {
			t.Errorf("%s: an API group or apiVersion written by hand; take it from the registry (engine.Kind*, kinds.Group*)", at)
		}
	}
}

// TestHandWrittenFindsEveryForm shows what the check above finds and what
// it lets through.
func TestHandWrittenFindsEveryForm(t *testing.T) {
	groups := registeredGroups()
	tests := []struct {
		src  string
		want int
	}{
		{`var a = "kueue.x-k8s.io/v1beta2"`, 1},
		{`var a = "nvidia.com/v1alpha1"`, 1},
		{`var a = map[string]any{"apiVersion": "admissionregistration.k8s.io/v1"}`, 1},
		{"var a = `scheduling.volcano.sh/v1beta1`", 1},
		{`var k = Key{Group: "kueue.x-k8s.io", Kind: "ClusterQueue"}`, 1},
		{`var a = "kueue.x-k8s.io/queue-name"`, 0},
		{`var a = "v1"`, 0},
		{`var a = "batch/v1"`, 0},
		{`var a = "example.com/v1"`, 0},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := handWritten(fset, f, groups); len(got) != tt.want {
			t.Errorf("%s: found %v, want %d", tt.src, got, tt.want)
		}
	}
}
