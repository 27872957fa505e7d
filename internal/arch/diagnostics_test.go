package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// summarySite is a diagnostic summary written in the source: where, and
// its text (a format string for fmt.Sprintf).
type summarySite struct {
	pos  string
	text string
}

// diagnosticSummaries finds every summary of an hcl.Diagnostic the files
// can produce that the source spells out: the Summary of a composite
// literal, and the argument of every call to a function with a string
// parameter named summary (errorf, errorAt, Warning, ...), each a string
// literal, a constant or fmt.Sprintf of a literal format. It returns the
// sites and the number of summaries it could not read (computed).
func diagnosticSummaries(files []goFile) (sites []summarySite, computed int) {
	params := map[string]int{}    // package path + "." + function name -> index of its summary parameter
	consts := map[string]string{} // string constants by name
	for _, f := range files {
		for _, decl := range f.file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				i := 0
				for _, field := range d.Type.Params.List {
					for _, n := range field.Names {
						if n.Name == "summary" {
							params[f.pkg+"."+d.Name.Name] = i
						}
						i++
					}
					if len(field.Names) == 0 {
						i++
					}
				}
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := stringLit(vs.Values[i]); ok {
								consts[n.Name] = s
							}
						}
					}
				}
			}
		}
	}
	for _, f := range files {
		imports := map[string]string{} // name in the file -> import path
		for _, im := range f.file.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndexByte(path, '/')+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = path
		}
		read := func(e ast.Expr) {
			text, ok := summaryText(e, consts)
			if !ok {
				computed++
				return
			}
			sites = append(sites, summarySite{pos: f.fset.Position(e.Pos()).String(), text: text})
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Diagnostic" && isIdent(sel.X, "hcl") {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Summary") {
							read(kv.Value)
						}
					}
				}
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = f.pkg + "." + fn.Name
				case *ast.SelectorExpr: // pkg.Func, or a method of the file's package
					name = f.pkg + "." + fn.Sel.Name
					if x, ok := fn.X.(*ast.Ident); ok && imports[x.Name] != "" {
						name = imports[x.Name] + "." + fn.Sel.Name
					}
				}
				if i, ok := params[name]; ok && i < len(n.Args) {
					read(n.Args[i])
				}
			}
			return true
		})
	}
	return sites, computed
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// summaryText is the text of summary expression e: a literal, a constant,
// or the format of fmt.Sprintf.
func summaryText(e ast.Expr, consts map[string]string) (string, bool) {
	if s, ok := stringLit(e); ok {
		return s, true
	}
	switch e := e.(type) {
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.SelectorExpr:
		s, ok := consts[e.Sel.Name]
		return s, ok
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "fmt") && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			return stringLit(e.Args[0])
		}
	}
	return "", false
}

// lowerCase reports a summary that starts with a lower-case letter: the
// Terraform convention, which gpuform follows, starts every summary with
// an upper-case one ("Unknown GPU model"; a verb in %s may start it).
func lowerCase(text string) bool {
	r, _ := utf8.DecodeRuneInString(text)
	return unicode.IsLower(r)
}

// TestDiagnosticSummariesStartUpperCase walks every diagnostic summary the
// source spells out (validate's, evaluation's, the plan's warnings) and
// fails on one that starts lower case.
func TestDiagnosticSummariesStartUpperCase(t *testing.T) {
	sites, computed := diagnosticSummaries(moduleFiles(t))
	if len(sites) < 100 {
		t.Fatalf("found %d diagnostic summaries (%d computed); the walk misses the source's", len(sites), computed)
	}
	for _, s := range sites {
		if lowerCase(s.text) {
			t.Errorf("%s: summary %q starts lower case; start it upper case (docs/language.md, Diagnostics)", s.pos, s.text)
		}
	}
}

// TestDiagnosticSummaryWalkFindsEveryForm checks the walk on a file with a
// lower-case summary in each form it reads.
func TestDiagnosticSummaryWalkFindsEveryForm(t *testing.T) {
	src := `package x
const lower = "lower constant"
func errorAt(rng int, summary, format string) {}
func (v *validator) warn(summary string) {}
var a = &hcl.Diagnostic{Summary: "literal"}
var b = hcl.Diagnostic{Summary: fmt.Sprintf("format %s", x)}
var c = hcl.Diagnostic{Summary: lower}
func f() {
	errorAt(0, "helper argument", "")
	v.warn("method argument")
	errorAt(0, "Upper", "")
	errorAt(0, computed(), "")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	sites, computed := diagnosticSummaries([]goFile{{rel: "x.go", pkg: "x", file: f, fset: fset}})
	var lower []string
	for _, s := range sites {
		if lowerCase(s.text) {
			lower = append(lower, s.text)
		}
	}
	want := "literal|format %s|lower constant|helper argument|method argument"
	if got := strings.Join(lower, "|"); got != want || computed != 1 {
		t.Errorf("lower-case summaries %q (%d computed), want %q (1 computed)", got, computed, want)
	}
}
