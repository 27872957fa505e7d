package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that prints a format takes -o/--output, as kubectl and
// Helm spell it; --format and --json keep working for scripts.
func TestOutputFlagEverywhere(t *testing.T) {
	dir := quickstartCopy(t)
	if r := runGpuform(t, nil, "--chdir", dir, "plan", "--out", "q.plan"); r.code != 0 {
		t.Fatalf("plan --out: exit %d\n%s", r.code, r.stderr)
	}
	plan := filepath.Join(dir, "q.plan")
	isJSON := func(s string) bool { return json.Valid([]byte(s)) && strings.HasPrefix(s, "{") }
	for _, tt := range []struct {
		args []string
		ok   func(string) bool
	}{
		{[]string{"validate", dir, "-o", "json"}, isJSON},
		{[]string{"validate", dir, "--json"}, isJSON},
		{[]string{"catalog", "-o", "json"}, isJSON},
		{[]string{"catalog", "--output=json"}, isJSON},
		{[]string{"--chdir", dir, "inventory", "-o", "json"}, isJSON},
		{[]string{"--chdir", dir, "inventory", "--json"}, isJSON},
		{[]string{"plan", dir, "-o", "json"}, isJSON},
		{[]string{"plan", dir, "--output", "markdown"}, func(s string) bool { return strings.HasPrefix(s, "### gpuform plan") }},
		{[]string{"plan", dir, "--format", "json"}, isJSON},
		{[]string{"plan", dir, "--json"}, isJSON},
		{[]string{"show", plan, "-o", "json"}, isJSON},
		{[]string{"show", plan, "--format", "markdown"}, func(s string) bool { return strings.HasPrefix(s, "### gpuform plan") }},
		{[]string{"drift", dir, "-o", "json"}, isJSON},
		{[]string{"drift", dir, "--json"}, isJSON},
	} {
		r := runGpuform(t, nil, append([]string{"--no-color"}, tt.args...)...)
		if (r.code != 0 && r.code != 2) || !tt.ok(r.stdout) {
			t.Errorf("gpuform %s: exit %d, not the format asked for\n%s\n%s", strings.Join(tt.args, " "), r.code, r.stdout, r.stderr)
		}
	}
	r := runGpuform(t, nil, "plan", dir, "-o", "yaml")
	if r.code != 1 || !strings.Contains(r.stderr, `unknown --output "yaml": use text, json, markdown`) {
		t.Errorf("plan -o yaml: exit %d\n%s", r.code, r.stderr)
	}
	// usage's --output, the first of the family, takes -o too.
	if f := newRootCommand(nil, nil, nil, nil); true {
		c, _, err := f.Find([]string{"usage"})
		if err != nil || c.Flags().ShorthandLookup("o") == nil || c.Flags().ShorthandLookup("o").Name != "output" {
			t.Errorf("usage has no -o for --output")
		}
	}
}
