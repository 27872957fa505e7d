package render

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// TextOptions tune the text renderer.
type TextOptions struct {
	// Color adds ANSI colours to the symbols.
	Color bool
	// Files are the configuration's parsed files, for the source line of a
	// warning that carries a position; nil shows the file and line only.
	Files map[string]*hcl.File
	// Detail prints every field of a created PrometheusRule instead of a
	// line per rule group (rules_summary.go).
	Detail bool
}

// Text writes the plan the way Terraform does: changes grouped by
// config address with + ~ - symbols and field paths, then a summary line.
func Text(w io.Writer, p *engine.Plan, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	r := textRenderer{w: bw, color: opts.Color, files: opts.Files, detail: opts.Detail}
	r.plan(p)
	return bw.Flush()
}

type textRenderer struct {
	w     *bufio.Writer
	color bool
	// files are TextOptions.Files.
	files map[string]*hcl.File
	// detail is TextOptions.Detail.
	detail bool
}

// paint styles s (escaped) with an SGR code when colours are on.
func (r *textRenderer) paint(code string, s any) textsafe.Styled {
	return textsafe.Style(r.color, code, s)
}

// title styles a section title in bold.
func (r *textRenderer) title(s string) textsafe.Styled { return r.paint("1", s) }

func (r *textRenderer) symbol(s string) textsafe.Styled {
	switch s {
	case "+":
		return r.paint("32", s)
	case "~":
		return r.paint("33", s)
	case "-":
		return r.paint("31", s)
	case "!":
		return r.paint("1;31", s)
	}
	return textsafe.Style(false, "", s)
}

// groups returns changes grouped by address, groups in order of first appearance.
func groups(changes []*engine.Change) [][]*engine.Change {
	idx := map[string]int{}
	var out [][]*engine.Change
	for _, c := range changes {
		i, ok := idx[c.Address]
		if !ok {
			i = len(out)
			idx[c.Address] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}

func (r *textRenderer) plan(p *engine.Plan) {
	if p.Source != "" {
		// The cluster first, as kubectl users look for the context.
		textsafe.Fprintf(r.w, "%s %s\n\n", r.title("Cluster:"), p.Source)
	}
	if !p.HasChanges() && p.Summary.Conflicts == 0 {
		textsafe.Fprintf(r.w, "%s\n\ngpuform compared the configuration of stack %s with the cluster and found no differences.\n", r.paint("1;32", "No changes. The cluster matches the configuration."), p.Stack)
		r.capacity(p)
		r.warnings(p)
		return
	}
	textsafe.Fprintf(r.w, "gpuform will perform the following actions on stack %s:\n", p.Stack)
	for _, g := range groups(p.Changes) {
		textsafe.Fprintf(r.w, "\n  %s\n", r.paint("1", "# "+g[0].Address+" "+groupVerb(g)))
		for _, c := range g {
			r.change(c)
		}
	}
	writeRepartitionsText(r.w, p.Repartitions, r.title)
	r.capacity(p)
	r.warnings(p)
	textsafe.Fprintf(r.w, "\n%s\n", r.paint("1", SummaryLine(p)))
}

// capacity prints the GPU capacity table.
func (r *textRenderer) capacity(p *engine.Plan) {
	if p.Capacity == nil || len(p.Capacity.Rows) == 0 {
		return
	}
	textsafe.Fprintf(r.w, "\nGPU capacity (now -> after this plan):\n")
	tw := tabwriter.NewWriter(r.w, 0, 4, 2, ' ', 0)
	textsafe.Fprintln(tw, "  POOL\tRESOURCE\tTOTAL\tQUOTA\tREQUESTED\tFREE\tQUOTA OF CAPACITY")
	for _, row := range p.Capacity.Rows {
		textsafe.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%s\n", row.Pool, row.Resource, beforeAfter(row.TotalBefore, row.Total), beforeAfter(row.QuotaBefore, row.Quota), row.Requested, row.Free, CapacityBar(row, capacityBarWidth))
	}
	_ = tw.Flush()
	textsafe.Fprintf(r.w, "  (%s)\n", capacityLegend)
	if p.Capacity.Stack != "" {
		textsafe.Fprintf(r.w, "  GPU stack: %s.\n", p.Capacity.Stack)
	}
	if p.Capacity.Kueue != "" {
		textsafe.Fprintf(r.w, "  Kueue: %s.\n", p.Capacity.Kueue)
	}
}

// warnings writes the plan's warnings as diagnostics, with their source
// position when they have one.
func (r *textRenderer) warnings(p *engine.Plan) {
	writeWarnings(r.w, p.Warnings, TextOptions{Color: r.color, Files: r.files})
}

// SummaryLine is the plan's last line: Plan: X to add, Y to change, Z to destroy.
func SummaryLine(p *engine.Plan) string {
	s := fmt.Sprintf("Plan: %d to add, %d to change, %d to destroy.", p.Summary.Add, p.Summary.Change, p.Summary.Destroy)
	if p.Summary.Conflicts > 0 {
		s += fmt.Sprintf(" %d %s in the way (see above; --adopt takes them over).", p.Summary.Conflicts, PluralWord(p.Summary.Conflicts, "object", "objects"))
	}
	return s
}

// PluralWord is one when n is 1, else many.
func PluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// groupVerb says what happens to a config address as a whole.
func groupVerb(g []*engine.Change) string {
	acts := map[engine.Action]bool{}
	for _, c := range g {
		acts[c.Action] = true
	}
	switch {
	case len(acts) == 1 && acts[engine.ActionCreate]:
		return "will be created"
	case len(acts) == 1 && acts[engine.ActionDelete]:
		return "will be destroyed"
	case len(acts) == 1 && acts[engine.ActionConflict]:
		return "is blocked by existing objects"
	}
	return "will be updated"
}

func (r *textRenderer) change(c *engine.Change) {
	header := textsafe.Sprintf("  %s %s", r.symbol(c.Action.Symbol()), c.Key)
	switch c.Action {
	case engine.ActionAdopt:
		header += textsafe.Sprintf(" (adopt: take over from %s)", engine.Owner(c.Before))
	case engine.ActionDelete:
		header += r.paint("2", "  # not in the configuration any more")
	}
	textsafe.Fprintln(r.w, header)
	gvk := schema.FromAPIVersionAndKind(c.APIVersion, c.Key.Kind)
	switch c.Action {
	case engine.ActionCreate:
		for _, f := range flatten(c.After.Object) {
			if !r.detail && f.path == "spec.groups" && isRuleKind(gvk) {
				r.ruleGroups(f.value)
				continue
			}
			r.field(engine.FieldDiff{Path: f.path, Op: engine.FieldAdd, After: f.value}, c.Sensitive, gvk)
		}
	case engine.ActionUpdate, engine.ActionAdopt:
		for _, f := range c.Fields {
			r.field(f, c.Sensitive, gvk)
		}
	case engine.ActionConflict:
		textsafe.Fprintf(r.w, "      %s\n", c.Reason)
	}
}

// field writes one field change of an object of kind gvk: one line, a
// heredoc for a long string, or one line per leaf for a long value that
// holds a list of maps (expanded). A sensitive object's values print as
// engine.SensitiveValue, on one line.
func (r *textRenderer) field(f engine.FieldDiff, sensitive bool, gvk schema.GroupVersionKind) {
	if !sensitive && r.expanded(f, gvk) {
		return
	}
	sym := r.symbol(string(f.Op))
	show := func(v any) string {
		if sensitive {
			return engine.SensitiveValue
		}
		return engine.FormatValue(v)
	}
	switch f.Op {
	case engine.FieldAdd:
		if s, ok := f.After.(string); ok && isLong(s) && !sensitive {
			r.heredoc(sym, f.Path, nil, &s)
			return
		}
		textsafe.Fprintf(r.w, "      %s %s = %s\n", sym, f.Path, show(f.After))
	case engine.FieldRemove:
		textsafe.Fprintf(r.w, "      %s %s = %s -> null\n", sym, f.Path, show(f.Before))
	default:
		bs, bok := f.Before.(string)
		as, aok := f.After.(string)
		if bok && aok && (isLong(bs) || isLong(as)) && !sensitive {
			r.heredoc(sym, f.Path, &bs, &as)
			return
		}
		textsafe.Fprintf(r.w, "      %s %s = %s -> %s\n", sym, f.Path, show(f.Before), show(f.After))
	}
}

// heredoc shows a long string whole (create) or as a line diff (update).
func (r *textRenderer) heredoc(sym textsafe.Styled, path string, before, after *string) {
	textsafe.Fprintf(r.w, "      %s %s = <<-EOT\n", sym, path)
	if before == nil {
		for _, line := range strings.Split(strings.TrimSuffix(*after, "\n"), "\n") {
			textsafe.Fprintf(r.w, "            %s\n", line)
		}
	} else {
		for _, l := range lineDiff(*before, *after) {
			switch l.Op {
			case engine.FieldAdd:
				textsafe.Fprintf(r.w, "          %s %s\n", r.symbol("+"), l.Text)
			case engine.FieldRemove:
				textsafe.Fprintf(r.w, "          %s %s\n", r.symbol("-"), l.Text)
			default:
				textsafe.Fprintf(r.w, "            %s\n", l.Text)
			}
		}
	}
	textsafe.Fprintf(r.w, "        EOT\n")
}

type flatField struct {
	path  string
	value any
}

// flatten lists the leaf fields of a desired object that a reader cares
// about: everything but apiVersion, kind, name, namespace and the ownership
// metadata every object carries.
func flatten(obj map[string]any) []flatField {
	var out []flatField
	var walk func(path []string, m map[string]any)
	walk = func(path []string, m map[string]any) {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			p := append(append([]string(nil), path...), k)
			if skipFlat(p) {
				continue
			}
			if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 {
				walk(p, sub)
				continue
			}
			out = append(out, flatField{path: engine.FormatPath(p), value: m[k]})
		}
	}
	walk(nil, obj)
	return out
}

func skipFlat(p []string) bool {
	if len(p) == 1 {
		return p[0] == "apiVersion" || p[0] == "kind"
	}
	if p[0] != "metadata" {
		return false
	}
	if len(p) == 2 {
		return p[1] == "name" || p[1] == "namespace"
	}
	if len(p) == 3 {
		switch p[2] {
		case engine.LabelManagedBy, engine.LabelStack, engine.AnnotAddress, engine.AnnotCommit:
			return true
		}
	}
	return false
}

// beforeAfter renders "n" when unchanged, "b -> a" when changed and
// "? -> a" when the figure before is unknown (-1).
func beforeAfter(before, after int) string {
	switch {
	case before == after:
		return fmt.Sprint(after)
	case before < 0:
		return fmt.Sprintf("? -> %d", after)
	}
	return fmt.Sprintf("%d -> %d", before, after)
}
