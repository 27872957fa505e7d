package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// compact renders a config diff one line per block and attribute.
func compact(changes []engine.BlockChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, fmt.Sprintf("%s %s", c.Action.Symbol(), c.Address))
		for _, f := range c.Attributes {
			b, _ := json.Marshal(f.Before)
			a, _ := json.Marshal(f.After)
			switch f.Op {
			case engine.FieldAdd:
				out = append(out, fmt.Sprintf("  + %s = %s", f.Path, a))
			case engine.FieldRemove:
				out = append(out, fmt.Sprintf("  - %s = %s", f.Path, b))
			default:
				out = append(out, fmt.Sprintf("  ~ %s = %s -> %s", f.Path, b, a))
			}
		}
	}
	return out
}

func TestConfigDiff(t *testing.T) {
	const secret = "s3://very-secret-bucket-4f1d"
	for _, tt := range []struct {
		name    string
		replace []string // on examples/bank for head
		// want is the diff, compact; a "..." line stands for the rest (not compared).
		want []string
	}{
		{name: "identical configurations", want: nil},
		{
			name:    "renamed tenant is a removal and an addition",
			replace: []string{`tenant "ocr" {`, `tenant "documents" {`, `tenant      = tenant.ocr`, `tenant      = tenant.documents`},
			want: []string{
				"+ tenant.documents",
				`  + namespace = "ocr-docs"`,
				`  + labels["team"] = "ocr"`,
				`  + quota["h100"].gpus = 2`,
				`  + cohort = "bank"`,
				`  + weight = 1`,
				`  + reclaimable = true`,
				`  + priorities = ["priority.batch"]`,
				`  + default_priority = "priority.batch"`,
				`  + admins = ["group:platform-admins"]`,
				`  + protect = false`,
				"- tenant.ocr",
				"~ model.invoice-reader",
				`  ~ tenant = "tenant.ocr" -> "tenant.documents"`,
			},
		},
		{
			name:    "MIG layout change, key by key",
			replace: []string{`slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }`, `slices = { "1g.10gb" = 2, "2g.20gb" = 2 }`, `slices          = { "3g.40gb" = var.risk_gpus, "1g.10gb" = 2 }`, `slices          = { "2g.20gb" = var.risk_gpus, "1g.10gb" = 2 }`, `borrowing_limit = { "3g.40gb" = 1 }`, `borrowing_limit = { "2g.20gb" = 1 }`, `lending_limit   = { "3g.40gb" = 0 }`, `lending_limit   = { "2g.20gb" = 0 }`, `slice       = "3g.40gb"`, `slice       = "2g.20gb"`},
			want: []string{
				"~ mig_layout.balanced",
				`  ~ slices["2g.20gb"] = 1 -> 2`,
				`  - slices["3g.40gb"] = 1`,
				"~ tenant.risk",
				`  + quota["a100"].slices["2g.20gb"] = 2`,
				`  + quota["a100"].borrowing_limit["2g.20gb"] = 1`,
				`  + quota["a100"].lending_limit["2g.20gb"] = 0`,
				`  - quota["a100"].slices["3g.40gb"] = 2`,
				`  - quota["a100"].borrowing_limit["3g.40gb"] = 1`,
				`  - quota["a100"].lending_limit["3g.40gb"] = 0`,
				"~ model.fraud-detector",
				`  ~ slice = "3g.40gb" -> "2g.20gb"`,
			},
		},
		{
			name:    "quota sub-block and scalar attributes",
			replace: []string{`slices          = { "3g.40gb" = var.risk_gpus, "1g.10gb" = 2 }`, `slices          = { "3g.40gb" = var.risk_gpus, "1g.10gb" = 3 }`, `pods             = 50`, `pods             = 60`},
			want: []string{
				"~ tenant.risk",
				`  ~ quota["a100"].slices["1g.10gb"] = 2 -> 3`,
				`  ~ pods = 50 -> 60`,
			},
		},
		{
			name:    "variable value and the blocks it feeds",
			replace: []string{`default     = 2`, `default     = 1`},
			want: []string{
				"~ var.risk_gpus",
				`  ~ value = 2 -> 1`,
				"~ tenant.risk",
				`  ~ quota["a100"].slices["3g.40gb"] = 2 -> 1`,
			},
		},
		{
			name:    "sensitive variable never shows its value",
			replace: []string{`default   = "s3://bank-models"` + "\n  sensitive = false", `default   = "` + secret + `"` + "\n  sensitive = true"},
			want: []string{
				"~ var.model_bucket",
				`  ~ value = "(sensitive)" -> "(sensitive)"`,
				`  ~ sensitive = false -> true`,
				"~ model.fraud-detector",
				`  ~ storage_uri = "(sensitive)" -> "(sensitive)"`,
				"~ model.invoice-reader",
				`  ~ storage_uri = "(sensitive)" -> "(sensitive)"`,
				"~ model.support-assistant",
				`  ~ storage_uri = "(sensitive)" -> "(sensitive)"`,
			},
		},
		{
			name:    "settings, priorities and pools",
			replace: []string{`scheduler = "kueue"`, "scheduler = \"kueue\"\n  mig_backend = \"agent\"", "time_slicing {\n    replicas = 2\n  }", "time_slicing {\n    replicas = 4\n  }", `preemption  = "Never"`, `preemption  = "PreemptLowerPriority"`},
			want: []string{
				"~ gpuform",
				`  ~ mig_backend = "gpu-operator" -> "agent"`,
				"~ priority.batch",
				`  ~ preemption = "Never" -> "PreemptLowerPriority"`,
				"~ pool.h100",
				`  ~ time_slicing.replicas = 2 -> 4`,
			},
		},
		{
			name:    "removed model and attribute",
			replace: []string{"model \"invoice-reader\" {", "/*model \"invoice-reader\" {", "priority    = priority.batch\n}", "priority    = priority.batch\n}*/", `  runtime     = "kserve-torchserve"` + "\n", ""},
			want: []string{
				"~ model.fraud-detector",
				`  - runtime = "kserve-torchserve"`,
				"- model.invoice-reader",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := enginetest.LoadExample(t, "bank")
			head := enginetest.LoadExample(t, "bank", tt.replace...)
			changes := engine.ConfigDiff(base, head)
			got := compact(changes)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("ConfigDiff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			b, _ := json.Marshal(changes)
			var text strings.Builder
			pv := &engine.Preview{Plan: &engine.Plan{Stack: "bank-prod"}, ConfigChanges: changes}
			_ = render.PreviewText(&text, pv, render.TextOptions{})
			for _, out := range []string{string(b), text.String(), render.PreviewMarkdown(pv)} {
				if strings.Contains(out, "very-secret") {
					t.Errorf("the sensitive value leaks:\n%s", out)
				}
			}
		})
	}
}

func TestConfigDiffFromNothing(t *testing.T) {
	head := enginetest.LoadExample(t, "bank")
	changes := engine.ConfigDiff(nil, head)
	var addrs []string
	for _, c := range changes {
		if c.Action != engine.ActionCreate {
			t.Errorf("%s: %s, want create", c.Address, c.Action)
		}
		addrs = append(addrs, c.Address)
	}
	want := "gpuform cluster var.model_bucket var.risk_gpus priority.batch priority.realtime mig_layout.balanced pool.a100 pool.h100 tenant.chatbot tenant.ocr tenant.risk model.fraud-detector model.invoice-reader model.support-assistant alert.AssistantPowerHigh"
	if got := strings.Join(addrs, " "); got != want {
		t.Errorf("blocks:\n%s\nwant:\n%s", got, want)
	}
	if got := engine.ConfigDiff(head, nil); len(got) != len(changes) || got[0].Action != engine.ActionDelete || len(got[0].Attributes) != 0 {
		t.Errorf("removing everything: %+v", got)
	}
}

// A for_each instance keeps its address; a long string is a line diff.
func TestConfigDiffInstancesAndLongStrings(t *testing.T) {
	load := func(desc string, keys string) *config.Config {
		src := fmt.Sprintf(`gpuform {
  stack = "s"
}

priority "p" {
  for_each    = toset(%s)
  value       = 10
  description = %q
}
`, keys, desc)
		cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return cfg
	}
	before := "line one\nline two\nline three\n"
	after := "line one\nline 2\nline three\n"
	changes := engine.ConfigDiff(load(before, `["a", "b"]`), load(after, `["b", "c"]`))
	got := compact(changes)
	want := []string{
		`- priority.p["a"]`,
		`~ priority.p["b"]`,
		`  ~ description = "line one\nline two\nline three\n" -> "line one\nline 2\nline three\n"`,
		`+ priority.p["c"]`,
		`  + value = 10`,
		`  + preemption = "PreemptLowerPriority"`,
		`  + description = "line one\nline 2\nline three\n"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ConfigDiff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	md := render.PreviewMarkdown(&engine.Preview{Plan: &engine.Plan{Stack: "s"}, ConfigChanges: changes})
	for _, line := range []string{"~     description = <<-EOT", "-         line two", "+         line 2", "          line three"} {
		if !strings.Contains(md, line+"\n") {
			t.Errorf("the long string is not a line diff (no %q):\n%s", line, md)
		}
	}
}
