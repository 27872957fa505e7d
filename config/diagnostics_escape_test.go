package config_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuform/gpuform/config"
)

// The diagnostic writer escapes control characters in the summary, the
// detail, the file name and the source line (a raw ESC in a comment), keeps
// its own colours, and still puts the carets under the range.
func TestDiagnosticsEscapeControlCharacters(t *testing.T) {
	src := "tenant \"a\" {\n  cpu = \"x\" # \x1b[8m hidden\n}\n"
	f, diags := hclsyntax.ParseConfig([]byte(src), "main\x1b[8m.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	start := strings.Index(src, "\x1b")
	rng := hcl.Range{Filename: "main\x1b[8m.hcl", Start: hcl.Pos{Line: 2, Column: 15, Byte: start}, End: hcl.Pos{Line: 2, Column: 19, Byte: start + 4}}
	d := hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad \x1b[8m", Detail: "Detail \x1b[8m\nwill be destroyed \u202e", Subject: &rng}}
	own := regexp.MustCompile(`\x1b\[(0|1|1;31|1;33)m`)
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		if err := (&config.DiagnosticWriter{Files: map[string]*hcl.File{rng.Filename: f}, Color: color}).Write(&b, d); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if rest := own.ReplaceAllString(out, ""); strings.ContainsAny(rest, "\x1b\u202e") {
			t.Errorf("color %v: a raw control character:\n%q", color, out)
		}
		if color != own.MatchString(out) {
			t.Errorf("color %v: gpuform's own colours present = %v:\n%q", color, own.MatchString(out), out)
		}
		plain := own.ReplaceAllString(out, "")
		for _, want := range []string{`Error: Bad \x1b[8m`, `on main\x1b[8m.hcl line 2`, `   2:   cpu = "x" # \x1b[8m hidden`, "         ^^^^^^^", `Detail \x1b[8m` + "\nwill be destroyed \\u202e"} {
			if !strings.Contains(plain, want) {
				t.Errorf("color %v: no %q in\n%s", color, want, plain)
			}
		}
	}
}
