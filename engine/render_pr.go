package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// PreviewSummary is the preview's first line: "Plan: 3 to add, 1 to
// change, 0 to destroy · MIG: 2 nodes re-partitioned · capacity OK".
func PreviewSummary(pv *Preview) string {
	p := pv.Plan
	parts := []string{fmt.Sprintf("Plan: %d to add, %d to change, %d to destroy", p.Summary.Add, p.Summary.Change, p.Summary.Destroy)}
	if p.Summary.Conflicts > 0 {
		parts = append(parts, fmt.Sprintf("%d %s in the way", p.Summary.Conflicts, pluralWord(p.Summary.Conflicts, "object", "objects")))
	}
	if n := len(RepartitionedNodes(p)); n > 0 {
		parts = append(parts, fmt.Sprintf("MIG: %s re-partitioned", count(n, "node")))
	}
	switch over := overQuotaPools(p); {
	case len(over) > 0:
		parts = append(parts, "capacity: over quota on "+pluralWord(len(over), "pool ", "pools ")+strings.Join(over, ", "))
	case len(pv.CapacityProblems) > 0:
		parts = append(parts, "capacity: "+count(len(pv.CapacityProblems), "problem"))
	default:
		parts = append(parts, "capacity OK")
	}
	return strings.Join(parts, " · ")
}

// overQuotaPools names the pools whose quotas exceed capacity x overcommit.
func overQuotaPools(p *Plan) []string {
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
// maxWarningLines addresses).
func PreviewWarnings(pv *Preview) []string {
	p := pv.Plan
	var out []string
	if pv.BaseError != "" {
		out = append(out, "the base configuration could not be read, so every block shows as added: "+pv.BaseError)
	}
	out = append(out, pv.CapacityProblems...)
	for _, u := range Unsafe(p, SafetyOptions{MaxDeletes: DefaultMaxDeletes}) {
		out = append(out, "apply refuses this plan as it stands: "+u)
	}
	var conflicts []string
	for _, c := range p.Changes {
		if c.Action == ActionConflict {
			conflicts = append(conflicts, fmt.Sprintf("%s is in the way of %s: %s", c.Key, c.Address, c.Reason))
		}
	}
	if len(conflicts) > maxWarningLines {
		conflicts = []string{fmt.Sprintf("%d objects are in the way of the configuration (--adopt takes them over): %s", len(conflicts), strings.Join(limit(conflictKeys(p), maxWarningLines), ", "))}
	}
	out = append(out, conflicts...)
	out = append(out, p.Warnings...)
	var destroys []string
	var deleted []string
	for _, g := range groups(p.Changes) {
		var keys []string
		ns := ""
		for _, c := range g {
			if c.Action != ActionDelete {
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
		w := fmt.Sprintf("%s: %s will be destroyed: %s", g[0].Address, count(len(keys), "object"), strings.Join(limit(keys, 5), ", "))
		if ns != "" {
			w += fmt.Sprintf(" (deleting namespace %s deletes everything in it)", ns)
		}
		destroys = append(destroys, w)
	}
	if len(destroys) > maxWarningLines {
		destroys = []string{fmt.Sprintf("%d objects of %d addresses will be destroyed: %s", len(deleted), len(destroys), strings.Join(limit(deleted, maxWarningLines), ", "))}
	}
	return append(out, destroys...)
}

// maxWarningLines bounds the warnings of one kind listed one per line.
const maxWarningLines = 10

func conflictKeys(p *Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if c.Action == ActionConflict {
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
func describeSource(s *ConfigSource, code func(string) string) string {
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
func configChangesSummary(changes []BlockChange) string {
	var add, change, remove int
	for _, c := range changes {
		switch c.Action {
		case ActionCreate:
			add++
		case ActionUpdate:
			change++
		case ActionDelete:
			remove++
		}
	}
	return fmt.Sprintf("%s: %d added, %d changed, %d removed.", count(len(changes), "block"), add, change, remove)
}

// writeConfigChanges writes the config diff. In diff mode (Markdown) the
// symbol of every line is in column 0, as a unified diff, so that GitHub
// colours it.
func writeConfigChanges(w io.Writer, changes []BlockChange, r *textRenderer, diff bool) {
	sym := func(op string) string {
		if r != nil {
			return r.symbol(op)
		}
		return op
	}
	line := func(op, indent, text string) {
		if diff {
			fmt.Fprintf(w, "%s %s%s\n", op, indent, text)
			return
		}
		fmt.Fprintf(w, "  %s%s %s\n", indent, sym(op), text)
	}
	value := func(v any) string {
		if v == SensitiveValue {
			return SensitiveValue
		}
		return FormatValue(v)
	}
	for _, c := range changes {
		switch c.Action {
		case ActionCreate:
			line("+", "", c.Address)
		case ActionDelete:
			line("-", "", c.Address)
		default:
			line("~", "", c.Address)
		}
		for _, f := range c.Attributes {
			op := string(f.Op)
			bs, bok := f.Before.(string)
			as, aok := f.After.(string)
			switch {
			case f.Op == FieldAdd && aok && isLong(as):
				line(op, "    ", f.Path+" = <<-EOT")
				for _, l := range strings.Split(strings.TrimSuffix(as, "\n"), "\n") {
					line("+", "    ", "    "+l)
				}
				line(" ", "    ", "EOT")
			case f.Op == FieldChange && bok && aok && (isLong(bs) || isLong(as)):
				line(op, "    ", f.Path+" = <<-EOT")
				for _, l := range LineDiff(bs, as) {
					o := string(l.Op)
					if o == "" {
						o = " "
					}
					line(o, "    ", "    "+l.Text)
				}
				line(" ", "    ", "EOT")
			case f.Op == FieldAdd:
				line(op, "    ", f.Path+" = "+value(f.After))
			case f.Op == FieldRemove:
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
	base, head     *CapacityRow
}

// capacityPairs matches base's and head's capacity rows by pool and
// resource, in head's order, then rows only base has.
func capacityPairs(pv *Preview) []capacityPair {
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
	fig := func(get func(*CapacityRow) int) string {
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
	total = fig(func(r *CapacityRow) int { return r.Total })
	quota = fig(func(r *CapacityRow) int { return r.Quota })
	requested = fig(func(r *CapacityRow) int { return r.Requested })
	free = fig(func(r *CapacityRow) int { return r.Free })
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

// RenderPreviewText writes a preview as text: the configuration changes,
// the plan, the capacity base -> head, warnings, and the summary line.
func RenderPreviewText(w io.Writer, pv *Preview, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	r := &textRenderer{w: bw, color: opts.Color}
	p := pv.Plan
	ident := func(s string) string { return s }
	fmt.Fprintf(bw, "Configuration: %s\n", strings.TrimPrefix(describeSource(p.ConfigSource, ident), "the "))
	fmt.Fprintf(bw, "Base:          %s\n", strings.TrimPrefix(describeSource(pv.Base, ident), "the "))

	fmt.Fprintf(bw, "\n%s\n", r.paint("1", "1. Configuration changes (base -> this change)"))
	if len(pv.ConfigChanges) == 0 {
		fmt.Fprintf(bw, "\n  The configuration is the same as at base.\n")
	} else {
		fmt.Fprintf(bw, "\n")
		writeConfigChanges(bw, pv.ConfigChanges, r, false)
		fmt.Fprintf(bw, "\n  %s\n", configChangesSummary(pv.ConfigChanges))
	}

	fmt.Fprintf(bw, "\n%s\n", r.paint("1", "2. What apply would do to the cluster now"))
	if !p.HasChanges() && p.Summary.Conflicts == 0 {
		fmt.Fprintf(bw, "\n  No changes. The cluster matches this configuration.\n")
	}
	for _, g := range groups(p.Changes) {
		fmt.Fprintf(bw, "\n  %s\n", r.paint("1", "# "+g[0].Address+" "+groupVerb(g)))
		for _, c := range g {
			r.change(c)
		}
	}

	fmt.Fprintf(bw, "\n%s\n\n", r.paint("1", "3. GPU capacity per pool (base -> this change)"))
	pairs := capacityPairs(pv)
	if len(pairs) == 0 {
		fmt.Fprintf(bw, "  No GPU pools.\n")
	} else {
		tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  POOL\tRESOURCE\tTOTAL\tQUOTA\tREQUESTED\tFREE\tSTATUS")
		for _, c := range pairs {
			total, quota, requested, free, status := c.cells("->")
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.pool, c.resource, total, quota, requested, free, status)
		}
		_ = tw.Flush()
	}
	for _, warn := range PreviewWarnings(pv) {
		fmt.Fprintf(bw, "\n%s %s\n", r.paint("1;33", "Warning:"), warn)
	}
	fmt.Fprintf(bw, "\n%s\n", r.paint("1", PreviewSummary(pv)))
	return bw.Flush()
}

// CollapseLines is the length, in lines, above which a Markdown section is
// folded into <details>.
const CollapseLines = 12

// RenderPreviewMarkdown returns a preview as one GitHub-flavoured Markdown
// text: the summary line first, warnings never collapsed, then the
// configuration changes, the plan and the capacity, each folded into
// <details> when longer than CollapseLines. SplitComments cuts it into
// comments.
func RenderPreviewMarkdown(pv *Preview) string {
	var b strings.Builder
	p := pv.Plan
	code := func(s string) string { return "`" + s + "`" }
	fmt.Fprintf(&b, "### gpuform plan for stack `%s`\n\n", p.Stack)
	fmt.Fprintf(&b, "**%s**\n\n", PreviewSummary(pv))
	fmt.Fprintf(&b, "Configuration: %s, compared with base %s.\n", describeSource(p.ConfigSource, code), describeSource(pv.Base, code))
	if warns := PreviewWarnings(pv); len(warns) > 0 {
		fmt.Fprintf(&b, "\n#### ⚠️ Warnings\n\n")
		for _, w := range warns {
			fmt.Fprintf(&b, "- %s\n", mdInline(w))
		}
	}

	fmt.Fprintf(&b, "\n#### 1. Configuration changes\n\n")
	if len(pv.ConfigChanges) == 0 {
		fmt.Fprintf(&b, "The configuration is the same as at base.\n")
	} else {
		var body strings.Builder
		body.WriteString("```diff\n")
		writeConfigChanges(&body, pv.ConfigChanges, nil, true)
		body.WriteString("```\n")
		fmt.Fprintf(&b, "%s\n\n", configChangesSummary(pv.ConfigChanges))
		collapse(&b, "Configuration changes", body.String())
	}

	fmt.Fprintf(&b, "\n#### 2. What apply would do to the cluster now\n\n")
	if !p.HasChanges() && p.Summary.Conflicts == 0 {
		fmt.Fprintf(&b, "No changes. The cluster matches this configuration.\n")
	} else {
		var table strings.Builder
		table.WriteString("| | Object | Address |\n|---|---|---|\n")
		for _, c := range p.Changes {
			fmt.Fprintf(&table, "| `%s` | %s | `%s` |\n", c.Action.Symbol(), mdEscape(c.Key.String()), c.Address)
		}
		fmt.Fprintf(&b, "%s\n\n", SummaryLine(p))
		collapse(&b, "Changes", table.String())
		var details strings.Builder
		tr := textRenderer{w: bufio.NewWriter(&details)}
		for _, c := range p.Changes {
			if c.Action == ActionUpdate || c.Action == ActionAdopt || c.Action == ActionConflict {
				tr.change(c)
			}
		}
		_ = tr.w.Flush()
		if details.Len() > 0 {
			b.WriteString("\n")
			collapse(&b, "Field changes", "```diff\n"+details.String()+"```\n")
		}
	}

	fmt.Fprintf(&b, "\n#### 3. GPU capacity per pool (base → this change)\n\n")
	pairs := capacityPairs(pv)
	if len(pairs) == 0 {
		fmt.Fprintf(&b, "No GPU pools.\n")
	} else {
		var table strings.Builder
		table.WriteString("| Pool | Resource | Total | Quota | Requested | Free | Status |\n|---|---|---:|---:|---:|---:|---|\n")
		for _, c := range pairs {
			total, quota, requested, free, status := c.cells("→")
			if status != "OK" && status != "removed" {
				status = "⚠️ " + status
			}
			fmt.Fprintf(&table, "| %s | `%s` | %s | %s | %s | %s | %s |\n", mdEscape(c.pool), c.resource, total, quota, requested, free, status)
		}
		collapse(&b, "GPU capacity", table.String())
	}
	return b.String()
}

// collapse writes body, folded into <details> when over CollapseLines
// lines (not counting code fences).
func collapse(b *strings.Builder, summary, body string) {
	n := 0
	for _, l := range strings.SplitAfter(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "```") {
			n++
		}
	}
	if n <= CollapseLines {
		b.WriteString(body)
		return
	}
	fmt.Fprintf(b, "<details><summary>%s (%d lines)</summary>\n\n%s\n</details>\n", summary, n, body)
}

// mdInline escapes text for a Markdown list item.
func mdInline(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// RenderPreviewJSON writes a preview as the --json plan with base_source,
// config_changes and capacity_before, and every preview warning.
func RenderPreviewJSON(w io.Writer, pv *Preview) error {
	out := NewJSONPlan(pv.Plan)
	out.BaseSource = pv.Base
	out.ConfigChanges = pv.ConfigChanges
	out.CapacityBefore = pv.CapacityBefore
	out.Warnings = PreviewWarnings(pv)
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// MaxCommentSize is GitHub's limit on the body of an issue or pull
// request comment: 65,536 characters; comments stay under it.
const MaxCommentSize = 65535

// CommentPart is one comment of a Markdown text cut by SplitComments.
type CommentPart struct {
	// Head is the hidden marker "<!-- gpuform:stack=S part=N/M -->" and
	// what reopens the blocks the previous part left open (a <details>, a
	// table's header, a code fence).
	Head string
	// Body is the part's slice of the text: the bodies of all parts
	// concatenated are the text.
	Body string
	// Tail closes what Body leaves open.
	Tail string
}

// String is the comment.
func (c CommentPart) String() string { return c.Head + c.Body + c.Tail }

// CommentMarker is the hidden first line of comment n of m, by which CI
// finds and updates the same comments on every push.
func CommentMarker(stack string, n, m int) string {
	return fmt.Sprintf("<!-- gpuform:stack=%s part=%d/%d -->\n", stack, n, m)
}

// mdState is what is open at a point of a Markdown text.
type mdState struct {
	fence, fenceInfo string   // the open code fence ("```") and its info string
	details          []string // the open <details> lines
	table            string   // the header and delimiter rows of the open table
	prev             string   // the previous line
}

// step advances the state over one line.
func (s *mdState) step(line string) {
	t := strings.TrimRight(line, "\r\n")
	trim := strings.TrimLeft(t, " ")
	indent := len(t) - len(trim)
	defer func() { s.prev = t }()
	if s.fence != "" {
		if indent < 4 && strings.HasPrefix(trim, s.fence) && strings.Trim(trim, "`") == "" {
			s.fence, s.fenceInfo = "", ""
		}
		return
	}
	if indent < 4 && strings.HasPrefix(trim, "```") {
		n := len(trim) - len(strings.TrimLeft(trim, "`"))
		s.fence, s.fenceInfo = trim[:n], strings.TrimSpace(trim[n:])
		s.table = ""
		return
	}
	switch {
	case strings.HasPrefix(trim, "<details"):
		s.details = append(s.details, t)
		s.table = ""
	case trim == "</details>" && len(s.details) > 0:
		s.details = s.details[:len(s.details)-1]
		s.table = ""
	case strings.HasPrefix(trim, "|"):
		if s.table == "" && strings.HasPrefix(s.prev, "|") && isDelimiterRow(trim) {
			s.table = s.prev + "\n" + t + "\n"
		}
	default:
		s.table = ""
	}
}

func isDelimiterRow(s string) bool {
	return strings.Trim(s, "|-: ") == "" && strings.Contains(s, "-")
}

// open reports whether anything is open.
func (s *mdState) open() bool {
	return s.fence != "" || len(s.details) > 0 || s.table != ""
}

// reopen is what a part starts with to continue inside s.
func (s *mdState) reopen() string {
	var b strings.Builder
	for _, d := range s.details {
		b.WriteString(strings.Replace(d, "</summary>", ", continued</summary>", 1) + "\n\n")
	}
	b.WriteString(s.table)
	if s.fence != "" {
		b.WriteString(s.fence + s.fenceInfo + "\n")
	}
	return b.String()
}

// close is what a part ends with to leave s closed; atLineStart says
// whether the body ended with a newline.
func (s *mdState) close(atLineStart bool) string {
	var b strings.Builder
	if !atLineStart {
		b.WriteString("\n")
	}
	if s.fence != "" {
		b.WriteString(s.fence + "\n")
	}
	for range s.details {
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

func (s mdState) clone() mdState {
	s.details = append([]string(nil), s.details...)
	return s
}

// SplitComments cuts a Markdown text into comments of fewer than limit
// bytes (so fewer characters), at line boundaries where it can: every part
// starts with CommentMarker, never ends inside a code block or <details>
// (they are closed and reopened in the next part, and a table's header is
// repeated), and the parts' bodies concatenated are the text.
func SplitComments(text, stack string, limit int) []CommentPart {
	budget := limit - 1 - len(CommentMarker(stack, 999999, 999999))
	var lines []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		// A line too long for any part is cut (at a UTF-8 boundary).
		for max := budget / 4; len(l) > max; {
			cut := max
			for cut > 0 && !utf8Start(l[cut]) {
				cut--
			}
			lines = append(lines, l[:cut])
			l = l[cut:]
		}
		lines = append(lines, l)
	}
	var parts []CommentPart
	var st mdState
	head := ""
	var body strings.Builder
	// clean is the last line of the current part that starts a heading with
	// nothing open: a better place to cut than wherever the budget ends.
	clean, cleanLen := -1, 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		next := st.clone()
		next.step(l)
		atStart := strings.HasSuffix(l, "\n")
		if body.Len() > 0 && len(head)+body.Len()+len(l)+len(next.close(atStart)) > budget {
			b := body.String()
			if clean >= 0 && cleanLen >= budget/2 {
				// Cut before the heading and go on from there.
				parts = append(parts, CommentPart{Head: head, Body: b[:cleanLen]})
				i = clean
				l = lines[i]
				st = mdState{}
				next = st.clone()
				next.step(l)
			} else {
				parts = append(parts, CommentPart{Head: head, Body: b, Tail: st.close(strings.HasSuffix(b, "\n"))})
			}
			head = st.reopen()
			body.Reset()
			clean = -1
		}
		if !st.open() && strings.HasPrefix(l, "#") && body.Len() > 0 {
			clean, cleanLen = i, body.Len()
		}
		body.WriteString(l)
		st = next
	}
	b := body.String()
	parts = append(parts, CommentPart{Head: head, Body: b, Tail: st.close(b == "" || strings.HasSuffix(b, "\n"))})
	for i := range parts {
		parts[i].Head = CommentMarker(stack, i+1, len(parts)) + parts[i].Head
	}
	return parts
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
