package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestDropSyntaxKeepsDiagnostics checks that a diagnostic rendered after
// DropSyntax reads exactly as before: file, line, enclosing block, snippet.
func TestDropSyntaxKeepsDiagnostics(t *testing.T) {
	src := "gpuform {\n  stack = \"s\"\n}\n\ntenant \"a\" {\n  admins = [\"group:a\"]\n}\n\ntenant \"b\" {\n  admins = [\"group:b\"]\n}\n"
	cfg, diags := LoadSources(map[string][]byte{"main.hcl": []byte(src)}, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	at := strings.Index(src, `["group:b"]`)
	d := hcl.Diagnostics{{
		Severity: hcl.DiagError, Summary: "Something", Detail: "Wrong.",
		Subject: &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 10, Column: 12, Byte: at}, End: hcl.Pos{Line: 10, Column: 23, Byte: at + 11}},
	}}
	render := func() string {
		var b strings.Builder
		w := &DiagnosticWriter{Files: cfg.Files}
		w.Write(&b, d)
		return b.String()
	}
	before := render()
	cfg.DropSyntax()
	after := render()
	if before != after {
		t.Errorf("diagnostic changed after DropSyntax:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if !strings.Contains(after, `in tenant "b"`) || !strings.Contains(after, `admins = ["group:b"]`) {
		t.Errorf("diagnostic lacks its block or snippet:\n%s", after)
	}
}
