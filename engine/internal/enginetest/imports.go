package enginetest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// NoImports fails the test when a non-test Go file of the package under
// test (the test's working directory) imports a package of banned or one
// below it; why, when set, ends each failure's message.
func NoImports(t *testing.T, why string, banned ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range banned {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					msg := f + " imports " + path
					if why != "" {
						msg += ": " + why
					}
					t.Error(msg)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files found")
	}
}
