package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// PreviewSummary is the preview's first line: "Plan: 3 to add, 1 to
// change, 0 to destroy · MIG: 2 nodes re-partitioned · capacity OK".
func PreviewSummary(pv *engine.Preview) string {
	p := pv.Plan
	parts := []string{fmt.Sprintf("Plan: %d to add, %d to change, %d to destroy", p.Summary.Add, p.Summary.Change, p.Summary.Destroy)}
	if p.Summary.Conflicts > 0 {
		parts = append(parts, fmt.Sprintf("%d %s in the way", p.Summary.Conflicts, PluralWord(p.Summary.Conflicts, "object", "objects")))
	}
	if n := len(engine.RepartitionedNodes(p)); n > 0 {
		parts = append(parts, fmt.Sprintf("MIG: %s re-partitioned", capacity.Count(n, "node")))
	}
	switch over := overQuotaPools(p); {
	case len(over) > 0:
		parts = append(parts, "capacity: over quota on "+PluralWord(len(over), "pool ", "pools ")+strings.Join(over, ", "))
	case len(pv.CapacityProblems) > 0:
		parts = append(parts, "capacity: "+capacity.Count(len(pv.CapacityProblems), "problem"))
	default:
		parts = append(parts, "capacity OK")
	}
	return strings.Join(parts, " · ")
}

// overQuotaPools names the pools whose quotas exceed capacity x overcommit.
func overQuotaPools(p *engine.Plan) []string {
	if p.Capacity == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range p.Capacity.Rows {
		if r.Quota > r.Limit && !seen[r.Pool] {
			seen[r.Pool] = true
			out = append(out, r.Pool)
		}
	}
	return out
}

// PreviewWarnings are what a reviewer must not miss, most serious first:
// a base that could not be read, capacity problems, what apply would
// refuse without a flag, objects in the way, disruption, and what the plan
// destroys (one line per address, or one line in all beyond
// maxWarningLines addresses). They are warning diagnostics as the plan's
// are; only the plan's own carry a source position.
func PreviewWarnings(pv *engine.Preview) hcl.Diagnostics {
	p := pv.Plan
	var out []string
	if pv.BaseError != "" {
		out = append(out, "the base configuration could not be read, so every block shows as added: "+pv.BaseError)
	}
	out = append(out, pv.CapacityProblems...)
	for _, u := range engine.Unsafe(p, engine.SafetyOptions{MaxDeletes: engine.DefaultMaxDeletes}) {
		out = append(out, "apply refuses this plan as it stands: "+u)
	}
	var conflicts []string
	for _, c := range p.Changes {
		if c.Action == engine.ActionConflict {
			conflicts = append(conflicts, fmt.Sprintf("%s is in the way of %s: %s", c.Key, c.Address, c.Reason))
		}
	}
	if len(conflicts) > maxWarningLines {
		conflicts = []string{fmt.Sprintf("%d objects are in the way of the configuration (--adopt takes them over): %s", len(conflicts), strings.Join(limit(conflictKeys(p), maxWarningLines), ", "))}
	}
	out = append(out, conflicts...)
	diags := append(engine.WarningsOf(out), p.Warnings...)
	var destroys []string
	var deleted []string
	for _, g := range groups(p.Changes) {
		var keys []string
		ns := ""
		for _, c := range g {
			if c.Action != engine.ActionDelete {
				continue
			}
			keys = append(keys, c.Key.String())
			if c.Key.Kind == "Namespace" && c.Key.Group == "" && ns == "" {
				ns = c.Key.Name
			}
		}
		if len(keys) == 0 {
			continue
		}
		deleted = append(deleted, keys...)
		w := fmt.Sprintf("%s: %s will be destroyed: %s", g[0].Address, capacity.Count(len(keys), "object"), strings.Join(limit(keys, 5), ", "))
		if ns != "" {
			w += fmt.Sprintf(" (deleting namespace %s deletes everything in it)", ns)
		}
		destroys = append(destroys, w)
	}
	if len(destroys) > maxWarningLines {
		destroys = []string{fmt.Sprintf("%d objects of %d addresses will be destroyed: %s", len(deleted), len(destroys), strings.Join(limit(deleted, maxWarningLines), ", "))}
	}
	return append(diags, engine.WarningsOf(destroys)...)
}

// maxWarningLines bounds the warnings of one kind listed one per line.
const maxWarningLines = 10

func conflictKeys(p *engine.Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if c.Action == engine.ActionConflict {
			out = append(out, c.Key.String())
		}
	}
	return out
}

// limit keeps the first n items of l and says how many more there are.
func limit(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(append([]string(nil), l[:n]...), fmt.Sprintf("and %d more", len(l)-n))
}

// describeSource words a configuration source; code wraps refs and hashes.
func describeSource(s *engine.ConfigSource, code func(string) string) string {
	if s == nil {
		return "the working directory (not in git)"
	}
	short := s.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	switch {
	case s.Commit == "" && s.Ref == "":
		return "the working directory (not in git)"
	case s.Ref == "" && s.Dirty:
		return "the working directory at " + code(short) + " (with uncommitted changes)"
	case s.Ref == "":
		return "the working directory at " + code(short)
	case strings.HasPrefix(s.Commit, s.Ref) && len(s.Ref) >= 7:
		return code(short) // the ref is the commit's hash
	}
	return code(s.Ref) + " at " + code(short)
}

// configChangesSummary counts blocks added, changed and removed.
func configChangesSummary(changes []engine.BlockChange) string {
	var add, change, remove int
	for _, c := range changes {
		switch c.Action {
		case engine.ActionCreate:
			add++
		case engine.ActionUpdate:
			change++
		case engine.ActionDelete:
			remove++
		}
	}
	return fmt.Sprintf("%s: %d added, %d changed, %d removed.", capacity.Count(len(changes), "block"), add, change, remove)
}

// writeConfigChanges writes the config diff. In diff mode (Markdown) the
// symbol of every line is in column 0, as a unified diff, so that GitHub
// colours it.
func writeConfigChanges(w io.Writer, changes []engine.BlockChange, r *textRenderer, diff bool) {
	sym := func(op string) textsafe.Styled {
		if r != nil {
			return r.symbol(op)
		}
		return textsafe.Style(false, "", op)
	}
	line := func(op, indent, text string) {
		if diff {
			textsafe.Fprintf(w, "%s %s%s\n", op, indent, text)
			return
		}
		textsafe.Fprintf(w, "  %s%s %s\n", indent, sym(op), text)
	}
	value := func(v any) string {
		if v == engine.SensitiveValue {
			return engine.SensitiveValue
		}
		return engine.FormatValue(v)
	}
	for _, c := range changes {
		switch c.Action {
		case engine.ActionCreate:
			line("+", "", c.Address)
		case engine.ActionDelete:
			line("-", "", c.Address)
		default:
			line("~", "", c.Address)
		}
		for _, f := range c.Attributes {
			op := string(f.Op)
			bs, bok := f.Before.(string)
			as, aok := f.After.(string)
			switch {
			case f.Op == engine.FieldAdd && aok && isLong(as):
				line(op, "    ", f.Path+" = <<-EOT")
				for _, l := range strings.Split(strings.TrimSuffix(as, "\n"), "\n") {
					line("+", "    ", "    "+l)
				}
				line(" ", "    ", "EOT")
			case f.Op == engine.FieldChange && bok && aok && (isLong(bs) || isLong(as)):
				line(op, "    ", f.Path+" = <<-EOT")
				for _, l := range lineDiff(bs, as) {
					o := string(l.Op)
					if o == "" {
						o = " "
					}
					line(o, "    ", "    "+l.Text)
				}
				line(" ", "    ", "EOT")
			case f.Op == engine.FieldAdd:
				line(op, "    ", f.Path+" = "+value(f.After))
			case f.Op == engine.FieldRemove:
				line(op, "    ", f.Path+" = "+value(f.Before)+" -> null")
			default:
				line(op, "    ", f.Path+" = "+value(f.Before)+" -> "+value(f.After))
			}
		}
	}
}

// capacityPair is one pool and resource under base and head.
type capacityPair struct {
	pool, resource string
	base, head     *capacity.Row
}

// capacityPairs matches base's and head's capacity rows by pool and
// resource, in head's order, then rows only base has.
func capacityPairs(pv *engine.Preview) []capacityPair {
	var out []capacityPair
	idx := map[[2]string]int{}
	if pv.Plan.Capacity != nil {
		for i := range pv.Plan.Capacity.Rows {
			r := &pv.Plan.Capacity.Rows[i]
			idx[[2]string{r.Pool, r.Resource}] = len(out)
			out = append(out, capacityPair{pool: r.Pool, resource: r.Resource, head: r})
		}
	}
	for i := range pv.CapacityBefore {
		r := &pv.CapacityBefore[i]
		if j, ok := idx[[2]string{r.Pool, r.Resource}]; ok {
			out[j].base = r
			continue
		}
		out = append(out, capacityPair{pool: r.Pool, resource: r.Resource, base: r})
	}
	// Keep a pool's rows together, in order of its first row; resources
	// in name order.
	rank := map[string]int{}
	for _, c := range out {
		if _, ok := rank[c.pool]; !ok {
			rank[c.pool] = len(rank)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].pool != out[j].pool {
			return rank[out[i].pool] < rank[out[j].pool]
		}
		return out[i].resource < out[j].resource
	})
	return out
}

// cells renders a pair's figures base -> head with arrow, "–" for a side
// without the row (a new or removed pool or profile; base unread).
func (c capacityPair) cells(arrow string) (total, quota, requested, free, status string) {
	fig := func(get func(*capacity.Row) int) string {
		b, h := "–", "–"
		if c.base != nil {
			b = fmt.Sprint(get(c.base))
		}
		if c.head != nil {
			h = fmt.Sprint(get(c.head))
		}
		if b == h {
			return h
		}
		return b + " " + arrow + " " + h
	}
	total = fig(func(r *capacity.Row) int { return r.Total })
	quota = fig(func(r *capacity.Row) int { return r.Quota })
	requested = fig(func(r *capacity.Row) int { return r.Requested })
	free = fig(func(r *capacity.Row) int { return r.Free })
	switch {
	case c.head == nil:
		status = "removed"
	case c.head.Quota > c.head.Limit:
		status = fmt.Sprintf("over quota (limit %d)", c.head.Limit)
	default:
		status = "OK"
	}
	return
}
