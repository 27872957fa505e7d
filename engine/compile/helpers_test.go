package compile_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>, rewriting it under -update
// (go test ./engine/compile -update).
var golden = enginetest.GoldenFiles("testdata", update)

// validateAtHere loads and validates src: without a summary it must be
// valid (and, with compiles, compile); else Validate must report exactly
// one diagnostic with that summary, at the line marked "# here".
func validateAtHere(t *testing.T, src, summary string, compiles bool) {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	diags = compile.Validate(cfg, mig.Default())
	if summary == "" {
		if len(diags) > 0 {
			t.Fatalf("valid configuration: %s", diags.Error())
		}
		if compiles {
			if _, err := compile.Compile(cfg); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if len(diags) != 1 || diags[0].Summary != summary {
		t.Fatalf("diagnostics %q, want one %q", diags.Error(), summary)
	}
	want := 0
	for i, line := range strings.Split(src, "\n") {
		if strings.HasSuffix(line, "# here") {
			want = i + 1
		}
	}
	if s := diags[0].Subject; s == nil || s.Start.Line != want {
		t.Errorf("%s at %v, want line %d", summary, s, want)
	}
}
