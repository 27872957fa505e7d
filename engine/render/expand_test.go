package render_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
)

// flavor is a ClusterQueue flavor with one resource's quota.
func flavor(name, quota string) map[string]any {
	return map[string]any{"name": name, "resources": []any{
		map[string]any{"name": "nvidia.com/mig-3g.40gb", "nominalQuota": quota},
	}}
}

// queueChange is an update of ClusterQueue risk with fields.
func queueChange(sensitive bool, fields ...engine.FieldDiff) *engine.Change {
	after := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": "risk"},
	}}
	return &engine.Change{
		Address: "tenant.risk", APIVersion: "kueue.x-k8s.io/v1beta2", Action: engine.ActionUpdate,
		Key: engine.Key{Group: "kueue.x-k8s.io", Kind: "ClusterQueue", Name: "risk"}, After: after,
		Fields: fields, Sensitive: sensitive,
	}
}

// renderFields renders a plan of change in text and Markdown, and returns
// the lines of its fields (those that start with six spaces in text, a
// diff symbol in Markdown) of each.
func renderFields(t *testing.T, c *engine.Change) (text, markdown string) {
	t.Helper()
	p := &engine.Plan{Stack: "s", Changes: []*engine.Change{c}, Summary: engine.Summary{Change: 1}}
	var tb, mb bytes.Buffer
	if err := render.Text(&tb, p, render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := render.Markdown(&mb, p); err != nil {
		t.Fatal(err)
	}
	pick := func(s string) string {
		var b strings.Builder
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "      ") {
				b.WriteString(strings.TrimPrefix(l, "      ") + "\n")
			}
		}
		return b.String()
	}
	return pick(tb.String()), pick(mb.String())
}

// TestExpandedFields checks that a field whose value holds a long list of
// maps prints one line per leaf, elements named by their keys, in the text
// plan and in the Markdown one: added and removed values leaf by leaf, a
// changed one only the leaves that differ; a short one stays on one line.
func TestExpandedFields(t *testing.T) {
	a100, h100, h100more := flavor("a100-80gb-pool", "2"), flavor("h100-80gb-pool", "4"), flavor("h100-80gb-pool", "6")
	cases := []struct {
		name  string
		field engine.FieldDiff
		want  string
	}{{
		name:  "added",
		field: engine.FieldDiff{Path: "spec.resourceGroups[0].flavors", Op: engine.FieldAdd, After: []any{a100, h100}},
		want: `+ spec.resourceGroups[0].flavors[a100-80gb-pool].name = "a100-80gb-pool"
+ spec.resourceGroups[0].flavors[a100-80gb-pool].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb"
+ spec.resourceGroups[0].flavors[a100-80gb-pool].resources[nvidia.com/mig-3g.40gb].nominalQuota = "2"
+ spec.resourceGroups[0].flavors[h100-80gb-pool].name = "h100-80gb-pool"
+ spec.resourceGroups[0].flavors[h100-80gb-pool].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb"
+ spec.resourceGroups[0].flavors[h100-80gb-pool].resources[nvidia.com/mig-3g.40gb].nominalQuota = "4"
`,
	}, {
		name:  "removed",
		field: engine.FieldDiff{Path: "spec.resourceGroups[0].flavors", Op: engine.FieldRemove, Before: []any{a100, h100}},
		want: `- spec.resourceGroups[0].flavors[a100-80gb-pool].name = "a100-80gb-pool" -> null
- spec.resourceGroups[0].flavors[a100-80gb-pool].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb" -> null
- spec.resourceGroups[0].flavors[a100-80gb-pool].resources[nvidia.com/mig-3g.40gb].nominalQuota = "2" -> null
- spec.resourceGroups[0].flavors[h100-80gb-pool].name = "h100-80gb-pool" -> null
- spec.resourceGroups[0].flavors[h100-80gb-pool].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb" -> null
- spec.resourceGroups[0].flavors[h100-80gb-pool].resources[nvidia.com/mig-3g.40gb].nominalQuota = "4" -> null
`,
	}, {
		name:  "changed: an element added, one changed, one removed",
		field: engine.FieldDiff{Path: "spec.resourceGroups[0].flavors", Op: engine.FieldChange, Before: []any{a100, h100}, After: []any{h100more, flavor("l4", "1")}},
		want: `~ spec.resourceGroups[0].flavors[h100-80gb-pool].resources[nvidia.com/mig-3g.40gb].nominalQuota = "4" -> "6"
+ spec.resourceGroups[0].flavors[l4].name = "l4"
+ spec.resourceGroups[0].flavors[l4].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb"
+ spec.resourceGroups[0].flavors[l4].resources[nvidia.com/mig-3g.40gb].nominalQuota = "1"
- spec.resourceGroups[0].flavors[a100-80gb-pool].name = "a100-80gb-pool" -> null
- spec.resourceGroups[0].flavors[a100-80gb-pool].resources[nvidia.com/mig-3g.40gb].name = "nvidia.com/mig-3g.40gb" -> null
- spec.resourceGroups[0].flavors[a100-80gb-pool].resources[nvidia.com/mig-3g.40gb].nominalQuota = "2" -> null
`,
	}, {
		name:  "short: one line",
		field: engine.FieldDiff{Path: "spec.tolerations", Op: engine.FieldAdd, After: []any{map[string]any{"key": "gpuform.dev/dedicated", "operator": "Equal", "value": "secure", "effect": "NoSchedule"}}},
		want:  `+ spec.tolerations = [{"effect":"NoSchedule","key":"gpuform.dev/dedicated","operator":"Equal","value":"secure"}]` + "\n",
	}, {
		name:  "list of scalars: one line",
		field: engine.FieldDiff{Path: "spec.x", Op: engine.FieldAdd, After: []any{strings.Repeat("a", 70), strings.Repeat("b", 70)}},
		want:  `+ spec.x = ["` + strings.Repeat("a", 70) + `","` + strings.Repeat("b", 70) + `"]` + "\n",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, md := renderFields(t, queueChange(false, tc.field))
			if text != tc.want {
				t.Errorf("text:\n%s\nwant\n%s", text, tc.want)
			}
			if md != tc.want {
				t.Errorf("markdown:\n%s\nwant\n%s", md, tc.want)
			}
		})
	}
}

// TestExpandedFieldsSensitive checks that a sensitive object's list of
// maps prints as one (sensitive) line: expanded, its paths would name
// elements by their values.
func TestExpandedFieldsSensitive(t *testing.T) {
	secret := flavor("secret-flavor-name", "42")
	text, md := renderFields(t, queueChange(true, engine.FieldDiff{Path: "spec.resourceGroups[0].flavors", Op: engine.FieldChange, Before: []any{flavor("old-secret-name", "41")}, After: []any{secret, secret}}))
	want := "~ spec.resourceGroups[0].flavors = (sensitive) -> (sensitive)\n"
	if text != want || md != want {
		t.Errorf("text:\n%s\nmarkdown:\n%s\nwant\n%s", text, md, want)
	}
}

// TestExpandedFieldsBounded checks that a list of 10,000 elements prints
// at most engine.ExpandLimit leaf lines and a line counting the rest.
func TestExpandedFieldsBounded(t *testing.T) {
	list := make([]any, 10000)
	for i := range list {
		list[i] = flavor(fmt.Sprint("f", i), "1")
	}
	text, _ := renderFields(t, queueChange(false, engine.FieldDiff{Path: "spec.resourceGroups[0].flavors", Op: engine.FieldAdd, After: list}))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != engine.ExpandLimit+1 {
		t.Fatalf("%d lines, want %d", len(lines), engine.ExpandLimit+1)
	}
	want := fmt.Sprintf("... %d more fields of spec.resourceGroups[0].flavors not shown (the JSON output has them all)", 30000-engine.ExpandLimit)
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
	text, _ = renderFields(t, queueChange(false, engine.FieldDiff{Path: "spec.resourceGroups[0].flavors", Op: engine.FieldChange, Before: list[:1], After: list}))
	if n := strings.Count(text, "\n"); n != engine.ExpandLimit+1 || !strings.HasSuffix(text, fmt.Sprintf("... %d more fields of spec.resourceGroups[0].flavors not shown (the JSON output has them all)\n", 3*9999-engine.ExpandLimit)) {
		t.Errorf("changed list: %d lines, ending %q", n, text[max(0, len(text)-200):])
	}
}
