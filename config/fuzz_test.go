package config

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// maxSeedSize leaves generated configurations (examples/large) out of the
// seed corpus: the fuzzer mutates small inputs much faster.
const maxSeedSize = 64 << 10

// fuzzSnippets are hand-written seeds for what the examples do not show.
var fuzzSnippets = []string{
	``,
	`gpuform { stack = "s" }`,
	`gpuform { stack = "s" scheduler = "volcano" mig_backend = "agent" }`,
	"gpuform {\n  stack = \"s\"\n}\nvariable \"n\" {\n  type = number\n  default = 2\n  sensitive = true\n  validation {\n    condition = var.n > 0\n    error_message = \"positive\"\n  }\n}\n",
	"gpuform {\n  stack = \"s\"\n}\nlocals {\n  teams = { a = 1, b = 2 }\n}\npriority \"p\" {\n  value = 10\n}\nmig_layout \"l\" {\n  gpu = \"A100-80GB\"\n  device {\n    indexes = [0, 1]\n    slices = { \"1g.10gb\" = 7 }\n  }\n  device {\n    indexes = [2]\n    enabled = false\n  }\n}\npool \"a\" {\n  gpu = \"A100-80GB\"\n  mig_layout = mig_layout.l\n}\npool \"t\" {\n  gpu = \"L40S\"\n  time_slicing {\n    replicas = 4\n  }\n}\ntenant \"team\" {\n  for_each = local.teams\n  quota \"t\" {\n    gpus = each.value\n  }\n  priorities = [priority.p]\n  default_priority = priority.p\n}\nmodel \"m\" {\n  count = 2\n  tenant = tenant.team[\"a\"]\n  pool = pool.t\n  gpus = count.index + 1\n  format = \"onnx\"\n  storage_uri = \"s3://b/${count.index}\"\n  replicas = { min = 1, max = 3 }\n}\n",
	"gpuform {\n  stack = \"s\"\n}\nlocals {\n  a = local.b\n  b = local.a\n}\n",
	"gpuform {\n  stack = \"s\"\n}\ntenant \"x\" {\n  count = length(tenant.x)\n}\n",
	"gpuform {\n  stack = \"s\"\n}\nlocals {\n  s = <<EOT\n}\ntenant \"y\" {\nEOT\n  j = jsondecode(\"{\\\"a\\\": [1, 2]}\")\n  f = file(\"main.hcl\")\n  m = merge({ a = 1 }, { b = 2 })\n}\n",
	"gpuform {\n  stack = \"s\"\n}\n/* a comment\n}\nnot a block\n*/\npriority \"p\" {\n  value = 1\n}\n",
	"gpuform {\n  stack = \"s\"\n}\npriority \"p\" {\n  for_each = toset([\"a\", \"b\"])\n  value = index([\"a\", \"b\"], each.key)\n}\n",
	"gpuform {\n  stack = \"s\"\n}\nx = 1\nx = 2\n",
	"gpuform { stack = \"\xff\" }\n\t\t\xe2\x80\x8b tenant \"\xc3\xa9\" {}",
	// The source scan's states (config/limits.go): heredocs, templates,
	// escapes, comments, for expressions and directives, chained operators.
	"gpuform {\n  stack = \"s\"\n}\nlocals {\n  h = <<-EOT\n    %{ for k in [1, 2] ~}${k}$${x}%%{y}%{ endfor }\n    EOT\n  s = \"a\\\"b${ {a = [for x in [1] : x]}.a[0] }\" # (((\n  c = /* [[[ */ 1 == 1 ? !false : -1 + 2 * 3 % 4\n  o = { for k, v in { a = 1 } :\n    k => v... }\n  j = jsondecode(\"[[{}]]\")\n}\n",
	"gpuform {\n  stack = \"s\"\n}\nlocals {\n  x = ((((((((((1))))))))))[0][0]\n  y = \"${\"${\"${1}\"}\"}\"\n  z = toset(flatten(setproduct([\"a\"], [\"b\"])))\n}\n",
}

// budgetSnippets are seeds of the evaluation's limits (config/limits_value.go):
// values that double level after level, compared, encoded, deduplicated,
// used as conditional results; strings doubled; templates over
// MaxFileSize; numbers of many digits as strings.
func budgetSnippets() []string {
	eight := repeat("local.t18", 8)
	return []string{
		chain("s", 40, `"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`, `"${%[1]s}${%[1]s}"`),
		chain("s", 30, `"x"`, `"%%{ for i in [1, 2] }${%[1]s}%%{ endfor }"`),
		doubling(40, "eq = local.t40 == local.t40", "ne = local.t40 != [1]"),
		doubling(40, "j = jsonencode(local.t40)", "d = distinct([local.t40, local.t40])"),
		doubling(18, "eq = ["+eight+"] == ["+eight+"]", "c = true ? ["+eight+"] : []"),
		doubling(18, "f = flatten(["+eight+"])", "u = setunion(["+eight+"], [1])", "s = [for x in ["+eight+"] : x]"),
		hostileHead + "locals {\n  n = 1e600000000\n  x = \"n=${1e600000000}\"\n  y = tostring(local.n)\n}\n",
		hostileHead + "locals {\n  d = distinct(flatten([for i in range(100) : range(100)]))\n}\n",
	}
}

// FuzzLoad feeds arbitrary bytes to the loader as main.hcl. It must never
// panic; an error-free result must be complete enough for the engine; every
// diagnostic must render; and the chunked parse of large files must agree
// with hclsyntax's whole-file parse.
func FuzzLoad(f *testing.F) {
	dirs, err := filepath.Glob(filepath.Join("..", "examples", "*"))
	if err != nil {
		f.Fatal(err)
	}
	seeds := 0
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if info, err := e.Info(); err != nil || info.Size() > maxSeedSize {
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
			seeds++
		}
	}
	if seeds < 2 {
		f.Fatalf("only %d seed files under ../examples", seeds)
	}
	for _, s := range fuzzSnippets {
		f.Add([]byte(s))
	}
	for _, s := range budgetSnippets() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, diags := LoadSources(map[string][]byte{"main.hcl": data}, Options{})
		if cfg == nil {
			t.Fatal("LoadSources returned a nil Config")
		}
		if !diags.HasErrors() {
			checkComplete(t, cfg)
		}
		for _, d := range diags {
			if d == nil {
				t.Fatal("nil diagnostic")
			}
		}
		dw := DiagnosticWriter{Files: cfg.Files, Width: 78}
		if err := dw.Write(io.Discard, diags); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(io.Discard, diags); err != nil {
			t.Fatal(err)
		}
		checkChunks(t, data)
	})
}

// checkComplete checks what the engine relies on in an error-free result.
func checkComplete(t *testing.T, cfg *Config) {
	t.Helper()
	if cfg.Settings == nil || cfg.Cluster == nil {
		t.Fatalf("error-free result with Settings %v, Cluster %v", cfg.Settings, cfg.Cluster)
	}
	for _, m := range cfg.Models {
		if m.Tenant == nil || m.Pool == nil {
			t.Fatalf("error-free result: %s has tenant %v, pool %v", m.Address, m.Tenant, m.Pool)
		}
	}
	for _, p := range cfg.Pools {
		if p.NodeSelector == nil {
			t.Fatalf("error-free result: %s has no node selector", p.Address)
		}
	}
}

// checkChunks checks that parseChunks, whenever it accepts src, gives what
// hclsyntax.ParseConfig gives for the whole file.
func checkChunks(t *testing.T, src []byte) {
	t.Helper()
	chunked, ok := parseChunks(src, "main.hcl")
	if !ok {
		return
	}
	whole, diags := hclsyntax.ParseConfig(src, "main.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parseChunks accepted a file with errors: %s", diags.Error())
	}
	wb, cb := whole.Body.(*hclsyntax.Body), chunked.Body.(*hclsyntax.Body)
	if wb.SrcRange != cb.SrcRange || wb.EndRange != cb.EndRange {
		t.Fatalf("body ranges differ: whole %s end %s, chunked %s end %s", wb.SrcRange, wb.EndRange, cb.SrcRange, cb.EndRange)
	}
	if len(wb.Attributes) != 0 {
		t.Fatalf("parseChunks accepted top-level attributes")
	}
	if !reflect.DeepEqual(wb.Blocks, cb.Blocks) {
		t.Fatalf("blocks differ between the whole-file and the chunked parse")
	}
	for off := 0; off <= len(src); off += 1 + len(src)/64 {
		wn := whole.Nav.(interface{ ContextString(int) string }).ContextString(off)
		cn := chunked.Nav.(interface{ ContextString(int) string }).ContextString(off)
		if wn != cn {
			t.Fatalf("context at byte %d: whole %q, chunked %q", off, wn, cn)
		}
	}
}
