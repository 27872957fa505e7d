package render_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/render"
)

// bigPreview is a preview whose plan has n objects: creates, updates (some
// with multi-line strings) and deletes, and as many config blocks added.
func bigPreview(n int) *engine.Preview {
	p := &engine.Plan{Stack: "big", ConfigSource: &engine.ConfigSource{Commit: strings.Repeat("a", 40), Dirty: true}}
	var changes []engine.BlockChange
	for i := range n {
		addr := fmt.Sprintf("tenant.t[%q]", fmt.Sprintf("%04d", i))
		ns := fmt.Sprintf("team-%04d", i)
		switch i % 3 {
		case 0:
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "labels": map[string]any{"team": ns}}}}
			p.Changes = append(p.Changes, &engine.Change{Address: addr, Key: engine.Key{Kind: "Namespace", Name: ns}, APIVersion: "v1", Action: engine.ActionCreate, After: obj})
			p.Summary.Add++
			changes = append(changes, engine.BlockChange{Address: addr, Type: "tenant", Action: engine.ActionCreate, Attributes: []engine.FieldDiff{
				{Path: "namespace", Op: engine.FieldAdd, After: ns},
				{Path: `quota["a100"].slices["1g.10gb"]`, Op: engine.FieldAdd, After: 2},
			}})
		case 1:
			fields := []engine.FieldDiff{{Path: `spec.hard["requests.nvidia.com/gpu"]`, Op: engine.FieldChange, Before: "1", After: "2"}}
			if i%10 == 1 {
				fields = append(fields, engine.FieldDiff{Path: `data["config.yaml"]`, Op: engine.FieldChange, Before: "a: 1\nb: 2\nc: 3\n", After: "a: 1\nb: 4\nc: 3\n"})
			}
			p.Changes = append(p.Changes, &engine.Change{Address: addr, Key: engine.Key{Kind: "ResourceQuota", Namespace: ns, Name: "gpuform"}, APIVersion: "v1", Action: engine.ActionUpdate, Fields: fields})
			p.Summary.Change++
			changes = append(changes, engine.BlockChange{Address: addr, Type: "tenant", Action: engine.ActionUpdate, Attributes: []engine.FieldDiff{
				{Path: `quota["a100"].gpus`, Op: engine.FieldChange, Before: 1, After: 2},
				{Path: "description", Op: engine.FieldChange, Before: "one\ntwo\n", After: "one\nthree\n"},
			}})
		default:
			before := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
			p.Changes = append(p.Changes, &engine.Change{Address: addr, Key: engine.Key{Kind: "Namespace", Name: ns}, APIVersion: "v1", Action: engine.ActionDelete, Before: before})
			p.Summary.Destroy++
			changes = append(changes, engine.BlockChange{Address: addr, Type: "tenant", Action: engine.ActionDelete, Attributes: []engine.FieldDiff{}})
		}
	}
	p.Capacity = &capacity.Report{Rows: []capacity.Row{{Pool: "a100", Resource: "nvidia.com/mig-1g.10gb", Total: 64, Quota: 2000, Limit: 64, Free: -1936}}}
	return &engine.Preview{
		Plan: p, Base: &engine.ConfigSource{Ref: "origin/main", Commit: strings.Repeat("b", 40)}, ConfigChanges: changes,
		CapacityBefore:   []capacity.Row{{Pool: "a100", Resource: "nvidia.com/mig-1g.10gb", Total: 64, Quota: 10, Limit: 64, Free: 54}},
		CapacityProblems: []string{"Tenants' quotas on pool a100 claim 2000 of nvidia.com/mig-1g.10gb, but the pool has 64"},
	}
}

// checkParts checks the invariants of split comments: numbered markers,
// under the limit, fences and <details> balanced in each, tables never
// continued without their header, and nothing lost.
func checkParts(t *testing.T, md string, parts []render.CommentPart, stack string, limit int) {
	t.Helper()
	var bodies strings.Builder
	for i, part := range parts {
		c := part.String()
		if len(c) >= limit || utf8.RuneCountInString(c) >= limit {
			t.Errorf("part %d is %d bytes, limit %d", i+1, len(c), limit)
		}
		if marker := fmt.Sprintf("<!-- gpuform:stack=%s part=%d/%d -->\n", stack, i+1, len(parts)); !strings.HasPrefix(c, marker) {
			t.Errorf("part %d does not start with %q: %.80q", i+1, marker, c)
		}
		inFence, details, prev := false, 0, ""
		for _, line := range strings.Split(strings.TrimSuffix(c, "\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "```"):
				inFence = !inFence
			case inFence:
			case strings.HasPrefix(line, "<details>"):
				details++
			case line == "</details>":
				details--
			case strings.HasPrefix(line, "| `") && !strings.HasPrefix(prev, "|"):
				t.Errorf("part %d: a table row without its header: %q", i+1, line)
			}
			prev = line
		}
		if inFence || details != 0 {
			t.Errorf("part %d ends inside a code block (%v) or <details> (%d open)", i+1, inFence, details)
		}
		bodies.WriteString(part.Body)
	}
	if bodies.String() != md {
		t.Errorf("the parts' bodies are not the text: %d bytes, want %d", bodies.Len(), len(md))
	}
}

// The splitter at GitHub's limit, with a plan of 3,000 objects: several
// comments, each under 65,535 characters, numbered, with balanced fences,
// and nothing lost.
func TestSplitCommentsAtGitHubLimit(t *testing.T) {
	pv := bigPreview(3000)
	md := render.PreviewMarkdown(pv)
	if len(md) < 3*render.MaxCommentSize {
		t.Fatalf("the 3,000-object preview is only %d bytes; the test needs several comments", len(md))
	}
	parts := render.SplitComments(md, "big", render.MaxCommentSize)
	if len(parts) < 4 {
		t.Errorf("%d parts for %d bytes", len(parts), len(md))
	}
	checkParts(t, md, parts, "big", render.MaxCommentSize)
	first := parts[0].String()
	// The summary line and warnings come first, never collapsed.
	if !strings.Contains(first, "**Plan: 1000 to add, 1000 to change, 1000 to destroy · capacity: over quota on pool a100**") {
		t.Errorf("the first comment does not start with the summary:\n%.600s", first)
	}
	warnings := strings.Index(first, "#### ⚠️ Warnings")
	if warnings < 0 || strings.Contains(first[:warnings], "<details>") {
		t.Errorf("the warnings are missing or collapsed:\n%.2000s", first)
	}
	if !strings.Contains(first, "- Tenants' quotas on pool a100 claim 2000") {
		t.Errorf("the over-quota warning is missing")
	}
	for i, part := range parts[1:] {
		if part.Head == fmt.Sprintf("<!-- gpuform:stack=big part=%d/%d -->\n", i+2, len(parts)) {
			continue // the part starts at a boundary where nothing was open
		}
		if !strings.Contains(part.Head, "<details>") {
			t.Errorf("part %d continues a collapsed section without reopening it: %q", i+2, part.Head)
		}
	}
}

// At every limit, down to a few lines per comment, the invariants hold.
func TestSplitCommentsAtSmallLimits(t *testing.T) {
	md := render.PreviewMarkdown(bigPreview(60))
	for _, limit := range []int{400, 512, 777, 1000, 2048, 4096, 10000, len(md) + 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			parts := render.SplitComments(md, "s", limit)
			checkParts(t, md, parts, "s", limit)
			if limit > len(md)+60 && len(parts) != 1 {
				t.Errorf("%d parts for a text that fits one", len(parts))
			}
		})
	}
}

// The boundary: a text one byte over what fits makes two parts, and a line
// longer than a comment is cut at a UTF-8 boundary.
func TestSplitCommentsBoundary(t *testing.T) {
	const limit = 1000
	overhead := len(render.CommentMarker("s", 999999, 999999)) + 1
	fits := strings.Repeat(strings.Repeat("x", 9)+"\n", (limit-overhead)/10)
	if parts := render.SplitComments(fits, "s", limit); len(parts) != 1 {
		t.Errorf("%d bytes: %d parts, want 1", len(fits), len(parts))
	}
	over := fits + "y\n"
	for len(over)+overhead <= limit {
		over += "y\n"
	}
	parts := render.SplitComments(over, "s", limit)
	if len(parts) != 2 {
		t.Errorf("%d bytes: %d parts, want 2", len(over), len(parts))
	}
	checkParts(t, over, parts, "s", limit)
	long := strings.Repeat("é", 3000) + "\n"
	parts = render.SplitComments(long, "s", limit)
	checkParts(t, long, parts, "s", limit)
	for _, p := range parts {
		if !utf8.ValidString(p.Body) {
			t.Errorf("a part cuts a character: %q", p.Body[len(p.Body)-4:])
		}
	}
}

func TestPreviewMarkdownCollapsesLongSections(t *testing.T) {
	small := render.PreviewMarkdown(bigPreview(3))
	if strings.Contains(small, "<details>") {
		t.Errorf("sections of 12 lines or fewer are collapsed:\n%s", small)
	}
	big := render.PreviewMarkdown(bigPreview(30))
	for _, s := range []string{"<details><summary>Configuration changes (", "<details><summary>Changes (", "<details><summary>Field changes ("} {
		if !strings.Contains(big, s) {
			t.Errorf("no %q in:\n%s", s, big)
		}
	}
	if strings.Index(big, "#### ⚠️ Warnings") > strings.Index(big, "<details>") {
		t.Errorf("warnings come after a collapsed section")
	}
}
