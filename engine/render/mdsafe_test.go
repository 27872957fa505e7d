package render_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/render"
)

// hostileKeys are for_each keys (and so addresses, names, pool names,
// field paths and values) that would be Markdown or HTML in a pull request
// comment if written raw.
var hostileKeys = []string{"a|b", "<img src=x onerror=alert(1)>", "[x](http://evil)", "tick`s``", "*bold* _em_", "![i](http://evil/p.png)", "</details><h1>x</h1>", "line\nbreak", "```"}

// hostilePreview is a preview whose every name and value is a hostile
// key: a change per key (address, object name, field path and value), a
// warning naming it, a base ref and a pool.
func hostilePreview() *engine.Preview {
	p := &engine.Plan{Stack: "s", ConfigSource: &engine.ConfigSource{Commit: strings.Repeat("a", 40)}}
	var changes []engine.BlockChange
	for _, k := range hostileKeys {
		addr := fmt.Sprintf("tenant.t[%q]", k)
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": k}}}
		p.Changes = append(p.Changes, &engine.Change{Address: addr, Key: engine.Key{Kind: "Namespace", Name: k}, APIVersion: "v1", Action: engine.ActionCreate, After: obj})
		p.Changes = append(p.Changes, &engine.Change{Address: addr, Key: engine.Key{Kind: "ResourceQuota", Namespace: k, Name: "gpuform"}, APIVersion: "v1", Action: engine.ActionUpdate,
			Fields: []engine.FieldDiff{{Path: fmt.Sprintf("metadata.labels[%q]", k), Op: engine.FieldChange, Before: k, After: "```\n" + k}}})
		changes = append(changes, engine.BlockChange{Address: addr, Type: "tenant", Action: engine.ActionCreate, Attributes: []engine.FieldDiff{{Path: "description", Op: engine.FieldAdd, After: "```\n" + k}}})
		p.Warnings = append(p.Warnings, engine.Warning("tenant "+k+" has no quota", addr))
	}
	p.Summary.Add, p.Summary.Change = len(hostileKeys), len(hostileKeys)
	rows := []capacity.Row{{Pool: "p|<b>x</b>", Resource: "nvidia.com/gpu", Total: 8, Quota: 4, Limit: 8, Free: 4}}
	p.Capacity = &capacity.Report{Rows: rows}
	return &engine.Preview{Plan: p, Base: &engine.ConfigSource{Ref: "evil`|<img src=x>", Commit: strings.Repeat("b", 40)}, ConfigChanges: changes, CapacityBefore: rows}
}

// unescapedLink finds the "](" of a Markdown link or image.
var unescapedLink = regexp.MustCompile(`(^|[^\\])\]\(`)

// unescapedPipe finds a | that is not written \|.
var unescapedPipe = regexp.MustCompile(`(^|[^\\])\|`)

// TestMarkdownEscapesNames: in the plan's and the preview's Markdown (the
// pull request comment), names and values are shown as themselves, never
// as Markdown or HTML: every table row keeps its column count, no HTML tag
// and no link or image is made, no code span or code block is closed early
// and no line break ends a row. The output is also kept as golden files.
// Before, a key like a|b split a table row, <img> was raw HTML and a value
// holding ``` closed the diff block.
func TestMarkdownEscapesNames(t *testing.T) {
	pv := hostilePreview()
	var plan bytes.Buffer
	if err := render.Markdown(&plan, pv.Plan); err != nil {
		t.Fatal(err)
	}
	for name, md := range map[string]string{"plan/hostile.md": plan.String(), "plan/hostile-preview.md": render.PreviewMarkdown(pv)} {
		golden(t, name, md)
		inFence := false
		for i, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "```") {
				inFence = !inFence
				if inFence && line != "```diff" && line != "```text" {
					t.Errorf("%s:%d: a code block opens with %q", name, i+1, line)
				}
				continue
			}
			if inFence {
				if strings.Contains(strings.TrimLeft(line, " "), "```") {
					t.Errorf("%s:%d: a value holds ``` inside the code block: %q", name, i+1, line)
				}
				continue
			}
			text := stripCodeSpans(line)
			if strings.HasPrefix(line, "|") {
				if n, header := len(unescapedPipe.FindAllString(" "+line, -1)), strings.Count(line, "|"); n != 4 && n != 9 && n != 8 {
					t.Errorf("%s:%d: a table row with %d cell separators (of %d |): %q", name, i+1, n, header, line)
				}
			}
			if unescapedLink.MatchString(text) {
				t.Errorf("%s:%d: a link or an image: %q", name, i+1, line)
			}
			for _, bad := range []string{"<img", "<h1", "</details><", "<b>"} {
				if strings.Contains(text, bad) {
					t.Errorf("%s:%d: raw %q: %q", name, i+1, bad, line)
				}
			}
			for _, k := range hostileKeys {
				if k != "```" && strings.Contains(text, k) && strings.ContainsAny(k, "|<[*_`\n") {
					t.Errorf("%s:%d: the key %q is written raw: %q", name, i+1, k, line)
				}
			}
		}
		if inFence {
			t.Errorf("%s ends inside a code block", name)
		}
	}
}

// stripCodeSpans removes the code spans of a Markdown line (a run of n
// backticks, not escaped, up to the next run of exactly n), where text is
// literal.
func stripCodeSpans(line string) string {
	var out strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' || i > 0 && line[i-1] == '\\' {
			out.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(line); {
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += max(m, 1)
		}
		if end < 0 {
			out.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return out.String()
}
