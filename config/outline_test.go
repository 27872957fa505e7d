package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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

// TestOutlineNavigationAtEveryOffset checks that the outline DropSyntax
// leaves answers, at every byte of a file, what hclsyntax's navigation of
// the parsed file answers: the enclosing top-level block's header and
// definition range, or nothing between blocks. The files include one that
// does not parse (a block left open) and one parsed in chunks.
func TestOutlineNavigationAtEveryOffset(t *testing.T) {
	var chunked strings.Builder
	chunked.WriteString("gpuform {\n  stack = \"s\"\n}\n")
	for chunked.Len() < chunkMinSize+1024 {
		fmt.Fprintf(&chunked, "\n# tenant %d\ntenant \"t%d\" {\n  admins = [\"group:a\"]\n}\n", chunked.Len(), chunked.Len())
	}
	tests := []struct {
		name, src string
		step      int // every step-th offset: hclsyntax's navigation scans every block
	}{
		{"blocks", "gpuform {\n  stack = \"s\"\n}\n\ntenant \"a\" {\n  admins = [\"group:a\"]\n  quota \"p\" {\n    gpus = 1\n  }\n}\n\n# between\nmodel \"m\" \"x\" {\n}\n", 1},
		{"unclosed", "tenant \"a\" {\n  admins = [\"group:a\"]\n}\n\ntenant \"b\" {\n  admins = [\n", 1},
		{"chunked", chunked.String(), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			want, _ := hclsyntax.ParseConfig(src, "main.hcl", hcl.InitialPos)
			got, _ := parseHCL(src, "main.hcl")
			cfg := &Config{Files: map[string]*hcl.File{"main.hcl": got}}
			cfg.DropSyntax()
			nav, ok := cfg.Files["main.hcl"].Nav.(outline)
			if !ok {
				t.Fatalf("navigation after DropSyntax is a %T, not an outline", cfg.Files["main.hcl"].Nav)
			}
			wantNav := want.Nav.(interface {
				ContextString(int) string
				ContextDefRange(int) hcl.Range
			})
			blocks := 0
			for off := 0; off <= len(src); off += tt.step {
				if g, w := nav.ContextString(off), wantNav.ContextString(off); g != w {
					t.Fatalf("ContextString(%d) = %q, hclsyntax says %q", off, g, w)
				}
				if g, w := nav.ContextDefRange(off), wantNav.ContextDefRange(off); g != w {
					t.Fatalf("ContextDefRange(%d) = %v, hclsyntax says %v", off, g, w)
				}
				if nav.ContextString(off) != "" {
					blocks++
				}
			}
			if blocks == 0 {
				t.Fatal("no offset is inside a block: the test checks nothing")
			}
		})
	}
}
