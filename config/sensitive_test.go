package config_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// sensitiveMarker is a sensitive variable's value: no diagnostic may quote it.
const sensitiveMarker = "sv-cfg-marker-3b9d"

// Errors about a sensitive variable, or about expressions over it, never
// quote its value: not in the detail, not in the source snippet (the
// variables file line or the default that holds it), not in the JSON form.
func TestSensitiveValueNeverInDiagnostics(t *testing.T) {
	const decl = `gpuform {
  stack = "sv"
}

variable "secret" {
  type      = string
  sensitive = true
  default   = "` + sensitiveMarker + `"
}
`
	tests := []struct {
		name  string
		files map[string]string
		opts  config.Options
		// want is in the rendered diagnostics (what failed is still said).
		want []string
	}{
		{
			name: "wrong type in a variables file",
			files: map[string]string{"main.hcl": decl + "variable \"n\" {\n  type = number\n  sensitive = true\n}\n",
				"s.auto.vars.hcl": "n = \"" + sensitiveMarker + "\"\n"},
			want: []string{`The value for var.n (from s.auto.vars.hcl) is not a number.`, `variable "n" {`},
		},
		{
			name: "an expression that fails in a variables file",
			files: map[string]string{"main.hcl": decl + "variable \"n\" {\n  type = string\n  sensitive = true\n}\n",
				"s.auto.vars.hcl": "n = " + strings.ReplaceAll(sensitiveMarker, "-", "_") + "\n"},
			want: []string{"The value of var.n at s.auto.vars.hcl:1 could not be evaluated", `variable "n" {`},
		},
		{
			name:  "wrong type from --var",
			files: map[string]string{"main.hcl": decl + "variable \"n\" {\n  type = list(number)\n  sensitive = true\n}\n"},
			opts:  config.Options{Vars: []string{"n=[\"" + sensitiveMarker + "\""}},
			want:  []string{"is not a valid expression of type list of number"},
		},
		{
			name:  "wrong type from the environment",
			files: map[string]string{"main.hcl": decl + "variable \"n\" {\n  type = number\n  sensitive = true\n}\n"},
			opts:  config.Options{Env: []string{config.EnvVarPrefix + "n=" + sensitiveMarker}},
			want:  []string{"is not a number"},
		},
		{
			name: "failed validation of a default",
			files: map[string]string{"main.hcl": strings.Replace(decl, "  default", `  validation {
    condition     = length(var.secret) < 5
    error_message = "The secret is too long."
  }
  default`, 1)},
			want: []string{"The secret is too long.", `variable "secret" {`},
		},
		{
			name: "a function failing in a validation",
			files: map[string]string{"main.hcl": strings.Replace(decl, "  default", `  validation {
    condition     = tonumber(var.secret) > 0
    error_message = "A number."
  }
  default`, 1)},
			want: []string{"Invalid function argument", "which holds a sensitive value"},
		},
		{
			name:  "a function failing in a block",
			files: map[string]string{"main.hcl": decl + "tenant \"a\" {\n  cpu = tonumber(var.secret)\n}\n"},
			want:  []string{"Invalid function argument", "var.secret, which holds a sensitive value"},
		},
		{
			name:  "a function failing in a local",
			files: map[string]string{"main.hcl": decl + "locals {\n  n = tonumber(upper(var.secret))\n}\ntenant \"a\" {\n  pods = local.n\n}\n"},
			want:  []string{"Invalid function argument", "which holds a sensitive value"},
		},
		{
			name:  "a wrong type in a block",
			files: map[string]string{"main.hcl": decl + "tenant \"a\" {\n  pods = var.secret\n}\n"},
			want:  []string{`Inappropriate value for attribute "pods"`},
		},
		{
			name:  "an enum value that is not allowed",
			files: map[string]string{"main.hcl": decl + "priority \"p\" {\n  value      = 1\n  preemption = var.secret\n}\n"},
			want:  []string{"preemption must be one of", "got (sensitive)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, s := range tt.files {
				files[n] = []byte(s)
			}
			cfg, diags := config.LoadSources(files, tt.opts)
			if !diags.HasErrors() {
				t.Fatalf("no error; the case does not test anything")
			}
			var text bytes.Buffer
			if err := (&config.DiagnosticWriter{Files: cfg.Files, Width: 100}).Write(&text, diags); err != nil {
				t.Fatal(err)
			}
			js, err := json.Marshal(diags)
			if err != nil {
				t.Fatal(err)
			}
			for what, out := range map[string]string{"text": text.String(), "JSON": string(js)} {
				if strings.Contains(out, sensitiveMarker) || strings.Contains(out, strings.ToUpper(sensitiveMarker)) || strings.Contains(out, strings.ReplaceAll(sensitiveMarker, "-", "_")) {
					t.Errorf("the sensitive value is in the %s diagnostics:\n%s", what, out)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("diagnostics lack %q:\n%s", w, text.String())
				}
			}
		})
	}
}
