package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// bigConfig returns a configuration over chunkMinSize: the head, then n
// tenant blocks, then the tail.
func bigConfig(head string, n int, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		fmt.Fprintf(&b, "tenant \"t%d\" {\n  quota \"a100\" {\n    slices = { \"3g.40gb\" = %d }\n  }\n  labels = { team = \"t%d\" }\n}\n\n", i, 1+i%2, i)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

const bigHead = "# big\ngpuform {\n  stack = \"big\"\n}\n\nmig_layout \"halves\" {\n  gpu    = \"A100-80GB\"\n  slices = { \"3g.40gb\" = 2 }\n}\n\npool \"a100\" {\n  gpu        = \"A100-80GB\"\n  mig_layout = mig_layout.halves\n}\n\n"

func TestParseChunksMatchesWholeFile(t *testing.T) {
	cases := map[string]struct {
		src     []byte
		chunked bool // whether parseChunks is expected to accept it
	}{
		"plain":               {bigConfig(bigHead, 800, ""), true},
		"no final newline":    {bigConfig(bigHead, 800, "priority \"p\" {\n  value = 1\n}"), true},
		"crlf":                {[]byte(strings.ReplaceAll(string(bigConfig(bigHead, 800, "")), "\n", "\r\n")), true},
		"heredoc with braces": {bigConfig(bigHead, 800, "locals {\n  s = <<EOT\n}\ntenant \"x\" {\n}\nEOT\n}\n"), false},
		"comment with braces": {bigConfig(bigHead, 800, "/*\n}\ntenant \"x\" {\n}\n*/\n"), false},
		"top-level argument":  {bigConfig(bigHead, 800, "x = 1\n"), false},
		"syntax error":        {bigConfig(bigHead, 800, "tenant \"x\" {\n  = 1\n}\n"), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if len(c.src) < chunkMinSize {
				t.Fatalf("test input is %d bytes, under chunkMinSize", len(c.src))
			}
			_, ok := parseChunks(c.src, "main.hcl")
			if ok != c.chunked {
				t.Errorf("parseChunks accepted = %t, want %t", ok, c.chunked)
			}
			checkChunks(t, c.src)
			got, gotDiags := parseHCL(c.src, "main.hcl")
			want, wantDiags := hclsyntax.ParseConfig(c.src, "main.hcl", hcl.InitialPos)
			if gotDiags.Error() != wantDiags.Error() {
				t.Errorf("diagnostics differ:\n got %s\nwant %s", gotDiags.Error(), wantDiags.Error())
			}
			if want.Body.(*hclsyntax.Body).SrcRange != got.Body.(*hclsyntax.Body).SrcRange {
				t.Errorf("body range %s, want %s", got.Body.(*hclsyntax.Body).SrcRange, want.Body.(*hclsyntax.Body).SrcRange)
			}
		})
	}
}

// A diagnostic in a chunk-parsed file renders as in a whole-file parse: same
// range, same "in tenant ..." context.
func TestParseChunksDiagnostics(t *testing.T) {
	src := bigConfig(bigHead, 800, "model \"m\" {\n  tenant = tenant.t799\n  pool = pool.nope\n  format = \"onnx\"\n  storage_uri = \"s3://m\"\n}\n")
	render := func(files map[string]*hcl.File, diags hcl.Diagnostics) string {
		var b strings.Builder
		dw := DiagnosticWriter{Files: files}
		if err := dw.Write(&b, diags); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	cfg, diags := LoadSources(map[string][]byte{"main.hcl": src}, Options{})
	got := render(cfg.Files, diags)
	whole, _ := hclsyntax.ParseConfig(src, "main.hcl", hcl.InitialPos)
	want := render(map[string]*hcl.File{"main.hcl": whole}, diags)
	if got != want || !strings.Contains(got, `in model "m"`) || !strings.Contains(got, "pool.nope") {
		t.Errorf("chunked:\n%s\nwhole file:\n%s", got, want)
	}
	if f, _ := parseHCL(src, "main.hcl"); f == nil {
		t.Errorf("the file did not parse")
	} else if _, ok := f.Nav.(blockNav); !ok {
		t.Errorf("the file was not parsed in chunks")
	}
	if _, ok := cfg.Files["main.hcl"].Nav.(outline); !ok {
		t.Errorf("the loaded file kept its syntax, not an outline")
	}
}
