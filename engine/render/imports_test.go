package render_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The renderers only read values and write to an io.Writer: no package of
// theirs may reach files, the network, processes or the cluster.
func TestRenderersDoNoIO(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"os", "os/exec", "net", "net/http", "syscall", "io/fs", "path/filepath",
		"github.com/gpuform/gpuform/providers", "k8s.io/client-go"}
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
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: renderers must not do I/O besides their io.Writer", f, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files found")
	}
}
