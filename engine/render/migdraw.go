package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// slotWidth is the characters one memory slot takes in a MIG drawing.
const slotWidth = 4

// maxDrawnSlots bounds the memory slots drawn: no GPU has more than 8, and
// a saved plan file could say anything.
const maxDrawnSlots = 16

// migLegend explains the drawings under their title.
const migLegend = "Each [box] is a MIG instance over the memory slots it occupies; [  ] is a free slot."

// DrawGPU draws one GPU of slots memory slots holding instances: each
// instance a box as wide as its placement, each free slot an empty box,
// e.g. "[3g.40gb       ][3g.40gb       ][1g][  ]". Instances outside the
// slots or overlapping one drawn before are left out; more slots than
// any GPU has are not drawn.
func DrawGPU(slots int, instances []mig.Instance) string {
	if slots > maxDrawnSlots {
		return fmt.Sprintf("(%d memory slots: not drawn)", slots)
	}
	owner := make([]int, max(slots, 0))
	for i := range owner {
		owner[i] = -1
	}
	for i, in := range instances {
		pl := in.Placement
		if pl.Start < 0 || pl.Size <= 0 || pl.End() > slots || slices.ContainsFunc(owner[pl.Start:pl.End()], func(o int) bool { return o >= 0 }) {
			continue
		}
		for s := pl.Start; s < pl.End(); s++ {
			owner[s] = i
		}
	}
	var b strings.Builder
	for s := 0; s < slots; {
		if owner[s] < 0 {
			b.WriteString(box("", 1))
			s++
			continue
		}
		in := instances[owner[s]]
		b.WriteString(box(in.Profile, in.Placement.Size))
		s += in.Placement.Size
	}
	return b.String()
}

// drawLayout draws one GPU's layout: its instances, the whole GPU when MIG
// is off, question marks when unknown.
func drawLayout(l capacity.GPULayout) string {
	switch {
	case l.Slots <= 0:
		return "(GPU not in the catalog)"
	case l.Slots > maxDrawnSlots:
		return fmt.Sprintf("(%d memory slots: not drawn)", l.Slots)
	case l.Unknown:
		return box("?", l.Slots)
	case !l.MIG:
		return box("MIG off: whole GPU", l.Slots)
	}
	return DrawGPU(l.Slots, l.Instances)
}

// box is a label in brackets size slots wide, the label shortened to its
// compute part ("1g", "1g+me") when the full name does not fit.
func box(label string, size int) string {
	inner := size*slotWidth - 2
	if len(label) > inner {
		short, _, _ := strings.Cut(label, ".")
		if strings.HasSuffix(label, "+me") && len(short)+3 <= inner {
			short += "+me"
		}
		label = short
	}
	if len(label) > inner {
		label = label[:inner]
	}
	return "[" + label + strings.Repeat(" ", inner-len(label)) + "]"
}

// slotRuler numbers the memory slots over a drawing: " 0   1   2   3".
func slotRuler(slots int) string {
	var b strings.Builder
	for s := range slots {
		n := strconv.Itoa(s)
		b.WriteString(" " + n + strings.Repeat(" ", slotWidth-1-len(n)))
	}
	return strings.TrimRight(b.String(), " ")
}

// gpuSpan names GPU indexes compactly: "GPU 0", "GPU 0-7", "GPU 0-3,6".
func gpuSpan(idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(idx[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	return "GPU " + strings.Join(parts, ",")
}

// gpuRows groups GPUs that draw the same (each of draws) under one span,
// in index order: the label and the drawings of each group.
func gpuRows(index []int, draws ...[]string) (labels []string, rows [][]string) {
	seen := map[string]int{}
	var groups [][]int
	for i := range index {
		var key []string
		for _, d := range draws {
			key = append(key, d[i])
		}
		k := strings.Join(key, "\n")
		g, ok := seen[k]
		if !ok {
			g = len(groups)
			seen[k] = g
			groups = append(groups, nil)
			rows = append(rows, key)
		}
		groups[g] = append(groups[g], index[i])
	}
	for _, g := range groups {
		labels = append(labels, gpuSpan(g))
	}
	return labels, rows
}

// maxNodesNamed bounds the node names listed over one drawing.
const maxNodesNamed = 5

// repartitionGroup is nodes whose drawings are the same (pool empty in
// the inventory's).
type repartitionGroup struct {
	nodes       []string
	pool, model string
	// note says how the drawing was made, when not from the GPUs.
	note  string
	lines []string
}

// repartitionLines draws each re-partitioned node's GPUs now and after,
// nodes that draw the same grouped under one heading.
func repartitionLines(reps []capacity.Repartition) []string {
	var groups []*repartitionGroup
	byKey := map[string]*repartitionGroup{}
	for _, r := range reps {
		index := make([]int, len(r.After))
		now, after := make([]string, len(r.After)), make([]string, len(r.After))
		for i, a := range r.After {
			index[i], after[i] = a.Index, drawLayout(a)
			now[i] = "?"
			if i < len(r.Before) {
				now[i] = drawLayout(r.Before[i])
			}
		}
		labels, rows := gpuRows(index, now, after)
		width := 0
		for _, l := range labels {
			width = max(width, len(l))
		}
		var lines []string
		for i, l := range labels {
			lines = append(lines,
				fmt.Sprintf("  %-*s  now    %s", width, l, rows[i][0]),
				fmt.Sprintf("  %-*s  after  %s", width, "", rows[i][1]))
		}
		note := ""
		switch solved := slices.ContainsFunc(r.Before, func(l capacity.GPULayout) bool { return l.Solved }); {
		case solved && r.DRA:
			note = "; now: placed from the DRA driver's device counts"
		case solved:
			note = "; now: placed from GPU Feature Discovery's counts"
		case r.DRA:
			note = "; now: the DRA driver's devices"
		}
		key := r.Pool + "\n" + r.Model + "\n" + note + "\n" + strings.Join(lines, "\n")
		g := byKey[key]
		if g == nil {
			g = &repartitionGroup{pool: r.Pool, model: r.Model, note: note, lines: lines}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.nodes = append(g.nodes, r.Node)
	}
	var out []string
	for i, g := range groups {
		if i > 0 {
			out = append(out, "")
		}
		names := strings.Join(limit(g.nodes, maxNodesNamed), ", ")
		out = append(out, fmt.Sprintf("%s (pool %s, %s, %s%s)", names, g.pool, g.model, capacity.Count(len(g.nodes), "node"), g.note))
		out = append(out, g.lines...)
	}
	return out
}

// writeRepartitionsText writes the plan's MIG drawings as text, each line
// indented.
func writeRepartitionsText(w io.Writer, reps []capacity.Repartition, title func(string) textsafe.Styled) {
	if len(reps) == 0 {
		return
	}
	textsafe.Fprintf(w, "\n%s\n  %s\n\n", title("MIG layouts (now -> after this plan):"), migLegend)
	for _, l := range repartitionLines(reps) {
		if l != "" {
			l = "  " + l
		}
		textsafe.Fprintf(w, "%s\n", l)
	}
}

// writeRepartitionsMarkdown writes the plan's MIG drawings as a Markdown
// section with a text block.
func writeRepartitionsMarkdown(w io.Writer, reps []capacity.Repartition, heading string) {
	if len(reps) == 0 {
		return
	}
	textsafe.Fprintf(w, "\n%s MIG layouts (now → after)\n\n%s\n\n```text\n", heading, migLegend)
	for _, l := range repartitionLines(reps) {
		textsafe.Fprintf(w, "%s\n", strings.TrimRight(codeSafe(l), " "))
	}
	textsafe.Fprintf(w, "```\n")
}

// codeSafe keeps a line from closing a Markdown code block.
func codeSafe(s string) string { return strings.ReplaceAll(s, "`", "'") }
