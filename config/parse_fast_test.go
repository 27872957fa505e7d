package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/testdata/gen/gen"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// fastCases are hand-written inputs for parseFast, with whether each must
// take the fast path. Those that need not may take it or not: whenever
// parseFast accepts an input, its body must be hclsyntax's.
var fastCases = []struct {
	name string
	src  string
	fast bool
}{
	{"empty", "", true},
	{"blank lines", "\n\n\n", true},
	{"only comment", "# c\n", true},
	{"comment without newline", "# c", true},
	{"block", "tenant \"t\" {\n  cpu = \"8\"\n}\n", true},
	{"block at end of file", "tenant \"t\" {\n  cpu = \"8\"\n}", true},
	{"leading blank line", "\ntenant \"t\" {\n  cpu = \"8\"\n}\n", true},
	{"leading comment", "# head\n// more\n\ntenant \"t\" {\n  cpu = \"8\"\n}\n", true},
	{"empty block", "gpuform {\n}\n", true},
	{"empty block one line", "gpuform {}\n", true},
	{"no labels", "gpuform {\n  stack = \"s\"\n}\n", true},
	{"two labels", "a \"b\" \"c\" {\n}\n", true},
	{"bare label", "a b {\n}\n", true},
	{"label with dots", "mig_layout \"1g.10gb\" {\n}\n", true},
	{"empty label", "a \"\" {\n}\n", true},
	{"nested blocks", "a {\n  b \"x\" {\n    c {\n      d = 1\n    }\n  }\n}\n", true},
	{"single-line block", "a {\n  b { c = 1 }\n}\n", true},
	{"single-line block with object", "a { b = { c = 1 } }\n", true},
	{"numbers", "a {\n  n0 = 0\n  n1 = 1.0\n  n2 = 10.50\n  n3 = 1e3\n  n4 = 2.5E-2\n  n5 = 007\n  n6 = 123456789012345678901234567890\n}\n", true},
	{"strings", "a {\n  s = \"with spaces\"\n  e = \"\"\n  u = \"s3://models/t/m/v1\"\n  b = \"{}[]#//=,.\"\n}\n", true},
	{"literals", "a {\n  t = true\n  f = false\n  n = null\n}\n", true},
	{"traversals", "a {\n  r = tenant.team-0001\n  s = a.b.c-d.e_f\n  t = x\n  u = a . b\n}\n", true},
	{"tuples", "a {\n  e = []\n  l = [1, 2, 3]\n  t = [1, 2,]\n  n = [[1], [], [\"a\", b.c]]\n}\n", true},
	{"tuple across lines", "a {\n  l = [\n    1,\n    # c\n    2, // d\n\n    3\n  ]\n}\n", true},
	{"tuple traversal across lines", "a {\n  l = [a\n    .b]\n}\n", true},
	{"objects", "a {\n  e = {}\n  o = { a = 1, \"b\" = 2 }\n  t = { a = 1, }\n  n = { a = { b = [1] }, c = {} }\n}\n", true},
	{"object across lines", "a {\n  o = {\n    a = 1\n    \"b\" = \"x\" # c\n\n    c = 2,\n    d = [\n      1,\n    ]\n  }\n}\n", true},
	{"object mixed separators", "a {\n  o = { a = 1\n    b = 2, c = 3\n  }\n}\n", true},
	{"object literal keys", "a {\n  o = { true = 1, 1 = 2, a.b = 3, null = 4 }\n}\n", true},
	{"comments after items", "a \"b\" { # c\n  x = 1 # d\n  y = 2 // e\n} # f\n", true},
	{"comment at end without newline", "a {\n  x = 1\n} # end", true},
	{"spaces at end", "a {\n}\n   ", true},
	{"trailing spaces", "a {   \n  x = 1   \n}   \n", true},
	{"top-level attribute", "x = 1\n", true},
	{"top-level attribute at end", "x = \"a\"", true},
	{"ident for as value", "a {\n  for = [a, for]\n}\n", true},

	{"duplicate attribute", "a {\n  x = 1\n  x = 2\n}\n", false},
	{"two items on a line", "a {} b {}\n", false},
	{"tab", "a {\n\tx = 1\n}\n", false},
	{"crlf", "a {\r\n  x = 1\r\n}\r\n", false},
	{"non-ascii", "a {\n  x = \"é\"\n}\n", false},
	{"non-ascii comment", "# é\na {\n}\n", false},
	{"escape", "a {\n  x = \"\\n\"\n}\n", false},
	{"template", "a {\n  x = \"${b}\"\n}\n", false},
	{"dollar", "a {\n  x = \"$5\"\n}\n", false},
	{"percent", "a {\n  x = \"5%\"\n}\n", false},
	{"negative", "a {\n  x = -1\n}\n", false},
	{"operator", "a {\n  x = 1 + 2\n}\n", false},
	{"operator in tuple", "a {\n  x = [1\n  + 2]\n}\n", false},
	{"comparison", "a {\n  x = a == b\n}\n", false},
	{"conditional", "a {\n  x = a ? b : c\n}\n", false},
	{"call", "a {\n  x = f(1)\n}\n", false},
	{"call across lines in tuple", "a {\n  x = [f\n(1)]\n}\n", false},
	{"index", "a {\n  x = a[0]\n}\n", false},
	{"legacy index", "a {\n  x = a.0\n}\n", false},
	{"splat", "a {\n  x = a.*.b\n}\n", false},
	{"parens", "a {\n  x = (1)\n}\n", false},
	{"heredoc", "a {\n  x = <<EOT\nhi\nEOT\n}\n", false},
	{"block comment", "/* c */\na {\n}\n", false},
	{"for tuple", "a {\n  x = [for v in y : v]\n}\n", false},
	{"for object", "a {\n  x = { for k, v in y : k => v }\n}\n", false},
	{"colon key", "a {\n  x = { a: 1 }\n}\n", false},
	{"paren key", "a {\n  x = { (a) = 1 }\n}\n", false},
	{"unclosed block", "a {\n  x = 1\n", false},
	{"unclosed string", "a {\n  x = \"abc\n}\n", false},
	{"unclosed tuple", "a {\n  x = [1, 2\n}\n", false},
	{"stray brace", "}\n", false},
	{"missing value", "a {\n  x =\n}\n", false},
	{"value on next line", "a {\n  x =\n  1\n}\n", false},
	{"comma after attribute", "a {\n  x = 1,\n}\n", false},
	{"block header across lines", "a\n{\n}\n", false},
	{"single-line block newline", "a { b = 1\n}\n", false},
	{"single-line block two items", "a { b = 1, c = 2 }\n", false},
	{"bad number", "a {\n  x = 1.2.3\n}\n", false},
	{"number then ident", "a {\n  x = 1x\n}\n", false},
	{"number dot", "a {\n  x = 1.\n}\n", false},
	{"ellipsis", "a {\n  x = [a...]\n}\n", false},
	{"traversal on literal", "a {\n  x = \"a\".b\n}\n", false},
	{"traversal across line", "a {\n  x = a.\nb\n}\n", false},
	{"quoted attribute name", "\"a\" = 1\n", false},
	{"equals in block header", "a = {\n}\n", true},
	{"block with equals", "a \"b\" = {\n}\n", false},
}

func TestParseFastCases(t *testing.T) {
	for _, c := range fastCases {
		t.Run(c.name, func(t *testing.T) {
			ok := checkFast(t, []byte(c.src), "main.hcl", hcl.InitialPos)
			if c.fast && !ok {
				t.Errorf("parseFast declined %q, want the fast path", c.src)
			}
			if !c.fast && ok {
				t.Errorf("parseFast accepted %q, want hclsyntax", c.src)
			}
		})
	}
}

// TestParseFastCorpus parses every chunk of the examples, the test
// configurations and a generated configuration both ways. All of the
// generated configuration's chunks must take the fast path.
func TestParseFastCorpus(t *testing.T) {
	files := corpusFiles(t)
	dir := t.TempDir()
	o := gen.Sizes()[0].Options()
	if err := gen.Write(dir, o); err != nil {
		t.Fatalf("generating a configuration: %v", err)
	}
	generated := filepath.Join(dir, gen.FileName)
	files = append(files, generated)
	if len(files) < 5 {
		t.Fatalf("only %d configuration files found", len(files))
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, src, path, hcl.InitialPos)
		chunks := splitChunks(src)
		fast := 0
		for _, c := range chunks {
			if checkFast(t, src[c.start:c.end], path, c.pos) {
				fast++
			}
		}
		t.Logf("%s: %d of %d chunks on the fast path", path, fast, len(chunks))
		if path == generated && fast != len(chunks) {
			t.Errorf("%s: %d of %d chunks on the fast path, want all", path, fast, len(chunks))
		}
	}
}

// corpusFiles lists the .hcl files of the examples and the test data.
func corpusFiles(tb testing.TB) []string {
	var files []string
	for _, root := range []string{"../examples", "testdata"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".hcl") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			tb.Fatalf("listing %s: %v", root, err)
		}
	}
	return files
}

// FuzzParseFast checks that whenever parseFast accepts an input, hclsyntax
// parses it without a diagnostic into the same body.
func FuzzParseFast(f *testing.F) {
	for _, c := range fastCases {
		f.Add(c.src)
	}
	for _, s := range fuzzSnippets {
		f.Add(s)
	}
	for _, path := range corpusFiles(f) {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range splitChunks(src) {
			f.Add(string(src[c.start:c.end]))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkFast(t, []byte(src), "f.hcl", hcl.Pos{Line: 3, Column: 1, Byte: 20})
	})
}

// checkFast parses src with parseFast and with hclsyntax and reports
// whether parseFast accepted it. When it did, hclsyntax must have no
// diagnostic and the same body.
func checkFast(t *testing.T, src []byte, filename string, start hcl.Pos) bool {
	t.Helper()
	got, ok := parseFast(src, filename, start)
	if !ok {
		return false
	}
	want, diags := hclsyntax.ParseConfig(src, filename, start)
	if diags.HasErrors() || len(diags) > 0 {
		t.Errorf("parseFast accepted %q, which hclsyntax rejects: %s", src, diags.Error())
		return true
	}
	if !reflect.DeepEqual(got, want.Body) {
		t.Errorf("parseFast(%q) differs from hclsyntax: %s", src, firstDiff(reflect.ValueOf(got), reflect.ValueOf(want.Body), "body"))
	}
	return true
}

// firstDiff returns where a and b first differ (in reflect.DeepEqual's
// sense) and how, or "" when they are deeply equal.
func firstDiff(a, b reflect.Value, path string) string {
	if a.IsValid() != b.IsValid() {
		return fmt.Sprintf("%s: valid %t vs %t", path, a.IsValid(), b.IsValid())
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %s vs %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %t vs %t", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s: nil %t len %d vs nil %t len %d", path, a.IsNil(), a.Len(), b.IsNil(), b.Len())
		}
		if a.Kind() == reflect.Map {
			for _, k := range a.MapKeys() {
				if d := firstDiff(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); d != "" {
					return d
				}
			}
			return ""
		}
		for i := range a.Len() {
			if d := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if a.CanInterface() && b.CanInterface() {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %#v vs %#v", path, a.Interface(), b.Interface())
		}
		return ""
	}
	if !reflect.DeepEqual(fmt.Sprint(a), fmt.Sprint(b)) {
		return fmt.Sprintf("%s: %v vs %v", path, a, b)
	}
	return ""
}

// TestParseHCLWithFastChunks checks the whole path: a large file parsed in
// chunks, each by parseFast, merges into exactly the body of hclsyntax's
// whole-file parse.
func TestParseHCLWithFastChunks(t *testing.T) {
	generated := sizeSource(t, "S")
	cases := map[string]struct {
		src  []byte
		slow int // chunks outside parseFast's subset
	}{
		"generated":        {generated, 0},
		"big":              {bigConfig(bigHead, 800, ""), 0},
		"no final newline": {bigConfig(bigHead, 800, "priority \"p\" {\n  value = 1\n}"), 0},
		"mixed":            {bigConfig(bigHead, 800, "locals {\n  x = 1 + 2\n}\n# end"), 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			src := c.src
			if len(src) < chunkMinSize {
				t.Fatalf("test input is %d bytes, under chunkMinSize", len(src))
			}
			slow := 0
			for _, c := range splitChunks(src) {
				if _, ok := parseFast(src[c.start:c.end], name, c.pos); !ok {
					slow++
				}
			}
			if slow != c.slow {
				t.Errorf("%d chunks outside the fast path, want %d", slow, c.slow)
			}
			got, diags := parseHCL(src, name)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			want, _ := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
			if !reflect.DeepEqual(got.Body, want.Body) {
				t.Errorf("chunked body differs from the whole-file parse: %s", firstDiff(reflect.ValueOf(got.Body), reflect.ValueOf(want.Body), "body"))
			}
		})
	}
}
