package arch

import (
	"go/ast"
	"strings"
	"testing"
)

// textOutputs are the packages and files that print text for people: every
// renderer, the command, the diagnostic writer and the -v request log.
var textOutputs = []string{"engine/render/", "cmd/gpuform/", "config/diagnostics.go", "providers/kubernetes/debug.go"}

// rawWriteAllowed are the raw writes of text that is escaped already: the
// plan's warnings, written by config.DiagnosticWriter, and the request log,
// whose lines are built with textsafe.
var rawWriteAllowed = map[string]bool{
	"engine/render/warnings.go:writeWarnings": true,
	"providers/kubernetes/debug.go:write":     true,
}

// TestTextOutputIsEscaped checks that text outputs print through
// internal/textsafe, which escapes terminal control sequences in every
// argument, never with fmt.Fprint*/io.WriteString directly: a description,
// a label value or a live object's field may hold ESC[8m, which hides the
// lines after it in a CI log.
func TestTextOutputIsEscaped(t *testing.T) {
	raw := map[string]bool{"fmt.Fprintf": true, "fmt.Fprintln": true, "fmt.Fprint": true, "io.WriteString": true}
	checked := 0
	for _, f := range moduleFiles(t) {
		if !isTextOutput(f.rel) {
			continue
		}
		checked++
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !raw[pkg.Name+"."+sel.Sel.Name] || rawWriteAllowed[f.rel+":"+fn.Name.Name] {
					return true
				}
				t.Errorf("%s: %s calls %s.%s; print with textsafe.Fprintf/Fprintln/Fprint, which escape control characters", f.fset.Position(call.Pos()), fn.Name.Name, pkg.Name, sel.Sel.Name)
				return true
			})
		}
	}
	if checked < 20 {
		t.Errorf("checked %d files of text output; the list is stale", checked)
	}
}

func isTextOutput(rel string) bool {
	for _, p := range textOutputs {
		if rel == p || strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}
