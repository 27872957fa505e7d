package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuform/gpuform/config"
)

// identityBase declares the sensitive variable and a block of every type
// that the cases below refer to.
const identityBase = `gpuform {
  stack = "sv"
}

variable "secret" {
  type      = string
  sensitive = true
  default   = "` + sensitiveMarker + `"
}

priority "p" {
  value = 10
}

mig_layout "l" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "a" {
  gpu = "A100-80GB"
}

department "d" {}

tenant "t" {
  quota "a" {
    gpus = 1
  }
}
`

// loadIdentity loads identityBase plus extra and renders its diagnostics
// as text and JSON, failing the test if either holds the marker.
func loadIdentity(t *testing.T, extra string) (hcl.Diagnostics, string) {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(identityBase + extra)}, config.Options{})
	var text bytes.Buffer
	if err := (&config.DiagnosticWriter{Files: cfg.Files, Width: 100}).Write(&text, diags); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(config.NewJSONDiagnostics(diags))
	if err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"text": text.String(), "JSON": string(js)} {
		if strings.Contains(strings.ToLower(out), strings.ToLower(sensitiveMarker)) {
			t.Errorf("the sensitive value is in the %s diagnostics:\n%s", what, out)
		}
	}
	return diags, text.String()
}

// sensitiveAt returns the "Sensitive value not allowed here" error whose
// subject starts at line:col, or nil.
func sensitiveAt(diags hcl.Diagnostics, line, col int) *hcl.Diagnostic {
	for _, d := range diags {
		if d.Summary == config.SummarySensitiveHere && d.Severity == hcl.DiagError && d.Subject != nil &&
			d.Subject.Start.Line == line && d.Subject.Start.Column == col {
			return d
		}
	}
	return nil
}

// position is the 1-based line and column where marker starts in src
// after identityBase.
func position(t *testing.T, src, marker string) (int, int) {
	t.Helper()
	i := strings.Index(src[len(identityBase):], marker) + len(identityBase)
	if i < len(identityBase) {
		t.Fatalf("%q is not in the source", marker)
	}
	line := strings.Count(src[:i], "\n") + 1
	return line, i - strings.LastIndex(src[:i], "\n")
}

// A value derived from a sensitive variable cannot become identity or
// metadata: used in for_each (keys become addresses and names), count, a
// namespace, a label key or value, a node selector or an annotation, it is
// an error at the expression, and no diagnostic shows the value.
func TestSensitiveValueCannotBecomeIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, block, at string
	}{
		{"for_each over a set", "tenant \"x\" {\n  for_each = toset([var.secret])\n}\n", "toset("},
		{"for_each key from a for expression", "tenant \"x\" {\n  for_each = { for k in [\"a\"] : \"${k}-${var.secret}\" => k }\n}\n", "{ for k"},
		{"for_each over a local", "locals {\n  teams = { (var.secret) = 1 }\n}\ntenant \"x\" {\n  for_each = local.teams\n}\n", "local.teams\n"},
		{"count", "tenant \"x\" {\n  count = length(var.secret)\n}\n", "length(var"},
		{"namespace", "tenant \"x\" {\n  namespace = \"ns-${var.secret}\"\n}\n", "\"ns-"},
		{"namespace from each.value", "tenant \"x\" {\n  for_each  = { a = var.secret }\n  namespace = each.value\n}\n", "each.value"},
		{"label value", "tenant \"x\" {\n  labels = { team = var.secret }\n}\n", "{ team"},
		{"label key", "tenant \"x\" {\n  labels = { (var.secret) = \"x\" }\n}\n", "{ (var"},
		{"protect (an annotation)", "tenant \"x\" {\n  protect = var.secret == \"\"\n}\n", "var.secret == \"\"\n"},
		{"node selector", "pool \"b\" {\n  gpu           = \"A100-80GB\"\n  node_selector = { zone = var.secret }\n}\n", "{ zone"},
		{"deployment mode (an annotation)", "model \"m\" {\n  tenant          = tenant.t\n  pool            = pool.a\n  format          = \"x\"\n  storage_uri     = \"s3://x\"\n  deployment_mode = var.secret\n}\n", "var.secret\n"},
		{"a reference chosen by the value", "tenant \"u\" {\n  quota \"a\" {\n    gpus = 1\n  }\n}\nmodel \"m\" {\n  tenant      = var.secret == \"\" ? tenant.t : tenant.u\n  pool        = pool.a\n  format      = \"x\"\n  storage_uri = \"s3://x\"\n}\n", "var.secret == \"\" ?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags, text := loadIdentity(t, tc.block)
			line, col := position(t, identityBase+tc.block, tc.at)
			if sensitiveAt(diags, line, col) == nil {
				t.Errorf("no %q error at main.hcl:%d:%d:\n%s", config.SummarySensitiveHere, line, col, text)
			}
		})
	}
	// Where gpuform hides the value, it may be used, from each.value too.
	diags, text := loadIdentity(t, "tenant \"x\" {\n  for_each = { a = var.secret }\n  cpu      = \"1\"\n  admins   = [\"user:${each.value}\"]\n}\nmodel \"m\" {\n  tenant      = tenant.t\n  pool        = pool.a\n  format      = \"x\"\n  storage_uri = \"s3://${var.secret}\"\n}\n")
	if diags.HasErrors() {
		t.Errorf("sensitive values in hideable arguments are refused:\n%s", text)
	}
}

// sensitiveExpr is an expression of type ty derived from var.secret; ref
// names the block type a reference argument wants.
func sensitiveExpr(a config.AttrSchema) string {
	cond := `var.secret == ""`
	switch {
	case a.RefList:
		return fmt.Sprintf("[%s ? %s : %s]", cond, refTarget(a.Ref), refTarget(a.Ref))
	case a.Ref != "":
		return fmt.Sprintf("%s ? %s : %s", cond, refTarget(a.Ref), refTarget(a.Ref))
	case a.Type == cty.String:
		return "var.secret"
	case a.Type == cty.Number:
		return "length(var.secret)"
	case a.Type == cty.Bool:
		return cond
	case a.Type.IsMapType() && a.Type.ElementType() == cty.String:
		return "{ k = var.secret }"
	case a.Type.IsMapType():
		return `{ "3g.40gb" = length(var.secret) }`
	case a.Type.IsListType() && a.Type.ElementType() == cty.String:
		return "[var.secret]"
	case a.Type.IsListType():
		return "[length(var.secret)]"
	case a.Type.IsObjectType():
		return "{ min = length(var.secret), max = length(var.secret) }"
	}
	return "var.secret"
}

// requiredArgs writes b's required arguments but skip, with plain values.
func requiredArgs(b config.BlockSchema, skip, indent string) string {
	plain := map[string]string{"value": "1", "replicas": "2", "gpu": `"A100-80GB"`, "tenant": "tenant.t", "pool": "pool.a", "format": `"x"`, "storage_uri": `"s3://x"`, "indexes": "[0]", "expr": `"up"`, "key": `"k"`}
	var out strings.Builder
	for _, a := range b.Attrs {
		if a.Required && a.Name != skip {
			fmt.Fprintf(&out, "%s%s = %s\n", indent, a.Name, plain[a.Name])
		}
	}
	return out.String()
}

func refTarget(typ string) string {
	return map[string]string{config.TypePriority: "priority.p", config.TypeMIGLayout: "mig_layout.l", config.TypePool: "pool.a", config.TypeDepartment: "department.d", config.TypeTenant: "tenant.t"}[typ]
}

// Every argument of every resource block and nested block refuses a value
// derived from a sensitive variable unless the schema marks it hideable,
// and a hideable one takes it: a new argument is refused until someone
// decides gpuform can hide it.
func TestSensitiveDeniedOutsideHideable(t *testing.T) {
	checked := 0
	for _, b := range config.Schema() {
		if !b.Repeatable {
			continue // gpuform and cluster take no references; variables and locals are not blocks of objects
		}
		for _, a := range b.Attrs {
			block := fmt.Sprintf("%s \"x\" {\n%s  %s = %s\n}\n", b.Type, requiredArgs(b, a.Name, "  "), a.Name, sensitiveExpr(a))
			checkSensitiveArg(t, b.Type+"."+a.Name, block, a)
			checked++
		}
		for _, nb := range b.Blocks {
			label := ""
			if len(nb.Labels) > 0 {
				label = ` "a"`
			}
			for _, a := range nb.Attrs {
				block := fmt.Sprintf("%s \"x\" {\n%s  %s%s {\n%s    %s = %s\n  }\n}\n", b.Type, requiredArgs(b, "", "  "), nb.Type, label, requiredArgs(nb, a.Name, "    "), a.Name, sensitiveExpr(a))
				checkSensitiveArg(t, b.Type+"."+nb.Type+"."+a.Name, block, a)
				checked++
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d arguments; the schema has more", checked)
	}
}

func checkSensitiveArg(t *testing.T, what, block string, a config.AttrSchema) {
	t.Helper()
	diags, text := loadIdentity(t, block)
	line, col := position(t, identityBase+block, a.Name+" = ")
	col += len(a.Name + " = ")
	got := sensitiveAt(diags, line, col)
	switch {
	case a.Hideable && got != nil:
		t.Errorf("%s is hideable but refuses a sensitive value:\n%s", what, text)
	case !a.Hideable && got == nil:
		t.Errorf("%s is not hideable but takes a sensitive value without %q at main.hcl:%d:%d:\n%s", what, config.SummarySensitiveHere, line, col, text)
	}
}

// languageDocPath is the language reference.
const languageDocPath = "../docs/language.md"

// docs/language.md lists exactly the hideable arguments.
func TestLanguageDocListsHideableArguments(t *testing.T) {
	src, err := os.ReadFile(languageDocPath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- hideable -->(.*?)<!-- /hideable -->").FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s has no <!-- hideable --> list", languageDocPath)
	}
	var want []string
	for _, b := range config.Schema() {
		for _, a := range b.Attrs {
			if a.Hideable {
				want = append(want, "`"+b.Type+"."+a.Name+"`")
			}
		}
	}
	got := regexp.MustCompile("`[a-z_]+\\.[a-z_]+`").FindAllString(string(m[1]), -1)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s lists the hideable arguments\n  %s\nbut the schema marks\n  %s", languageDocPath, strings.Join(got, " "), strings.Join(want, " "))
	}
}
