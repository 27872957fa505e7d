package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
)

// memberPreview is what previewing a change on one member gave.
type memberPreview struct {
	name string
	run  *memberRun
	res  *stack.PreviewResult
	// base is the member's configuration at --base (nil: none, or it
	// does not load), for the fleet capacity table.
	base *config.Config
	err  error
}

// fleetPreview is plan --base on the fleet of members: every selected
// member previewed at once (bounded), one section per member in fleet
// order, then the fleet capacity table per tenant (grants before and
// after on every member). Exit status as the fleet plan's, and 1 when a
// member's configuration does not fit its GPUs.
func (g *globals) fleetPreview(cmd *cobra.Command, members []fleetMember, f *planFlags, ff *fleetFlags, format string) error {
	if err := checkFleetFlags(cmd, ff, "repo", "ref", "out"); err != nil {
		return err
	}
	members, err := selectMembers(members, ff.clusters)
	if err != nil {
		return err
	}
	pvs := forEachMember(cmd.Context(), members, ff.parallelism, func(ctx context.Context, _ int, m fleetMember) *memberPreview {
		return g.previewMember(ctx, m, f)
	})
	if format == formatJSON {
		if err := writeFleetPreviewJSON(g.stdout, pvs); err != nil {
			return err
		}
	} else {
		var md strings.Builder
		for _, mp := range pvs {
			writeMemberPreview(&md, mp, format)
			_, _ = io.Copy(g.stderr, &mp.run.stderr)
		}
		writeFleetCapacity(&md, pvs, format)
		if format == formatMarkdown {
			if err := g.writeComments(md.String(), "fleet", f.outDir); err != nil {
				return err
			}
		} else {
			textsafe.Fprint(g.stdout, md.String())
		}
	}
	return fleetPreviewExit(pvs, f.detailedExitCode)
}

// previewMember previews the change on m: its preview against its
// cluster, and its configuration at the base.
func (g *globals) previewMember(ctx context.Context, m fleetMember, f *planFlags) *memberPreview {
	r := g.member(m)
	defer r.close()
	mp := &memberPreview{name: m.name, run: r}
	st := r.memberStack(m, connection{untrusted: true})
	mp.res, mp.err = st.Preview(ctx, stack.PreviewOptions{Base: f.base, Adopt: f.adopt, BaseUnreadable: func(cfg *config.Config, errs hcl.Diagnostics) {
		textsafe.Fprintf(r.g.stderr, "Warning: cluster %q: the configuration at base %s cannot be read; the preview shows every block as added.\n\n", m.name, f.base)
		r.g.writeDiags(cfg, errs)
	}})
	if mp.err != nil {
		mp.err = r.g.fail(mp.err, "")
		return mp
	}
	src := git.NewSource(git.SourceOptions{Dir: m.dir, Ref: f.base, Env: r.g.env})
	defer src.Close()
	if base, diags := stack.New(src, nil, r.g.stackOptions(m.load)).Validate(ctx); !diags.HasErrors() {
		mp.base = base
	}
	return mp
}

// writeMemberPreview writes one member's section: its preview, or why it
// has none.
func writeMemberPreview(w *strings.Builder, mp *memberPreview, format string) {
	if format == formatMarkdown {
		textsafe.Fprintf(w, "## Cluster %s\n\n", render.MarkdownCode(mp.name))
	} else {
		textsafe.Fprintf(w, "Cluster %q:\n\n", mp.name)
	}
	switch {
	case mp.err != nil:
		why := memberFailure(mp.err)
		if _, printed := mp.err.(*exitError); printed {
			why = "failed (see the errors)"
		}
		if format == formatMarkdown {
			why = render.MarkdownText(why)
		}
		textsafe.Fprintf(w, "No preview: %s.\n\n", why)
	case format == formatMarkdown:
		w.WriteString(render.PreviewMarkdown(mp.res.Preview))
		w.WriteString("\n")
	default:
		_ = render.PreviewText(w, mp.res.Preview, render.TextOptions{Files: mp.res.Config.Files})
		w.WriteString("\n")
	}
}

// grants is what a configuration gives each tenant: by tenant, by pool,
// the quota as "4 GPUs" or "2 x 3g.40gb".
func grants(cfg *config.Config) map[string]map[string]string {
	out := map[string]map[string]string{}
	if cfg == nil {
		return out
	}
	for _, t := range cfg.Tenants {
		byPool := map[string]string{}
		for _, q := range t.Quotas {
			var parts []string
			if q.GPUs > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", q.GPUs, render.PluralWord(q.GPUs, "GPU", "GPUs")))
			}
			for _, s := range slices.Sorted(maps.Keys(q.Slices)) {
				parts = append(parts, fmt.Sprintf("%d x %s", q.Slices[s], s))
			}
			if len(parts) == 0 {
				parts = append(parts, "0 GPUs")
			}
			byPool[q.PoolName] = strings.Join(parts, ", ")
		}
		out[t.Name] = byPool
	}
	return out
}

// capacityRow is one row of the fleet capacity table.
type capacityRow struct {
	tenant, cluster, pool, before, after string
}

// fleetCapacityRows are every tenant's grants on every previewed member,
// by tenant name, then fleet order, then pool; "-" where the tenant has
// no quota on the pool (on that member, at that side).
func fleetCapacityRows(pvs []*memberPreview) []capacityRow {
	var rows []capacityRow
	for _, mp := range pvs {
		if mp.res == nil {
			continue
		}
		before, after := grants(mp.base), grants(mp.res.Config)
		tenants := slices.Sorted(maps.Keys(before))
		for t := range after {
			if !slices.Contains(tenants, t) {
				tenants = append(tenants, t)
			}
		}
		for _, t := range tenants {
			pools := slices.Collect(maps.Keys(before[t]))
			for p := range after[t] {
				if !slices.Contains(pools, p) {
					pools = append(pools, p)
				}
			}
			slices.Sort(pools)
			for _, p := range pools {
				rows = append(rows, capacityRow{t, mp.name, p, orDash(before[t][p]), orDash(after[t][p])})
			}
		}
	}
	order := map[string]int{}
	for i, mp := range pvs {
		order[mp.name] = i
	}
	slices.SortStableFunc(rows, func(a, b capacityRow) int {
		if c := strings.Compare(a.tenant, b.tenant); c != 0 {
			return c
		}
		return order[a.cluster] - order[b.cluster]
	})
	return rows
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeFleetCapacity writes the fleet capacity table per tenant.
func writeFleetCapacity(w *strings.Builder, pvs []*memberPreview, format string) {
	rows := fleetCapacityRows(pvs)
	if format != formatMarkdown {
		textsafe.Fprintf(w, "Fleet capacity per tenant (quota per pool, before -> after):\n")
		for _, r := range rows {
			mark := " "
			if r.before != r.after {
				mark = "~"
			}
			textsafe.Fprintf(w, "  %s %s on %s, pool %s: %s -> %s\n", mark, r.tenant, r.cluster, r.pool, r.before, r.after)
		}
		return
	}
	textsafe.Fprintf(w, "## Fleet capacity per tenant\n\nWhat each tenant's quota gives it on every cluster, per pool, at the base and with this change.\n\n| Tenant | Cluster | Pool | Before | After |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		after := render.MarkdownText(r.after)
		if r.before != r.after {
			after = "**" + after + "**"
		}
		textsafe.Fprintf(w, "| %s | %s | %s | %s | %s |\n", render.MarkdownCode(r.tenant), render.MarkdownCode(r.cluster), render.MarkdownCode(r.pool), render.MarkdownText(r.before), after)
	}
}

// writeFleetPreviewJSON prints {"clusters": [...]}: every member's
// preview document (as plan --base --format json prints it) or its error.
func writeFleetPreviewJSON(w io.Writer, pvs []*memberPreview) error {
	type member struct {
		Cluster string          `json:"cluster"`
		Preview json.RawMessage `json:"preview,omitempty"`
		Error   string          `json:"error,omitempty"`
	}
	var doc struct {
		Clusters []member `json:"clusters"`
	}
	for _, mp := range pvs {
		m := member{Cluster: mp.name}
		if mp.err != nil {
			m.Error = memberFailure(mp.err)
		} else {
			var b strings.Builder
			if err := render.PreviewJSON(&b, mp.res.Preview); err != nil {
				return err
			}
			m.Preview = json.RawMessage(b.String())
		}
		doc.Clusters = append(doc.Clusters, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// fleetPreviewExit is 1 when a member failed, does not fit its GPUs or
// has objects in the way; else 2 with --detailed-exitcode and changes.
func fleetPreviewExit(pvs []*memberPreview, detailed bool) error {
	changes := false
	for _, mp := range pvs {
		if mp.err != nil || len(mp.res.Preview.CapacityProblems) > 0 || mp.res.Preview.Plan.Summary.Conflicts > 0 {
			return &exitError{code: 1}
		}
		changes = changes || mp.res.Preview.Plan.HasChanges()
	}
	if detailed && changes {
		return &exitError{code: 2}
	}
	return nil
}
