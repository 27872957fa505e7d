package main

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/fleet"
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
		var cms []fleet.CapacityMember
		for _, mp := range pvs {
			if mp.res != nil {
				cms = append(cms, fleet.CapacityMember{Cluster: mp.name, Before: mp.base, After: mp.res.Config})
			}
		}
		fleet.WriteCapacity(&md, fleet.CapacityRows(cms), format == formatMarkdown)
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
	fleet.WriteHeading(w, mp.name, format == formatMarkdown)
	switch {
	case mp.err != nil:
		why := fleet.Failure(mp.err)
		if _, printed := mp.err.(*exitError); printed {
			why = "failed (see the errors)"
		}
		if format == formatMarkdown {
			why = render.MarkdownText(why)
		}
		textsafe.Fprintf(w, "No preview: %s.\n\n", why)
	case format == formatMarkdown:
		w.WriteString(render.PreviewMarkdown(mp.res.Preview) + "\n")
	default:
		_ = render.PreviewText(w, mp.res.Preview, render.TextOptions{Files: mp.res.Config.Files})
		w.WriteString("\n")
	}
}

// writeFleetPreviewJSON prints {"clusters": [...]}: every member's
// preview document (as plan --base --format json prints it) or its error.
func writeFleetPreviewJSON(w io.Writer, pvs []*memberPreview) error {
	docs := make([]fleet.Doc, len(pvs))
	for i, mp := range pvs {
		docs[i] = fleet.Doc{Cluster: mp.name}
		var b bytes.Buffer
		if mp.err != nil {
			docs[i].Error = fleet.Failure(mp.err)
		} else if err := render.PreviewJSON(&b, mp.res.Preview); err != nil {
			return err
		}
		docs[i].JSON = b.Bytes()
	}
	return fleet.WriteJSON(w, "preview", docs)
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
