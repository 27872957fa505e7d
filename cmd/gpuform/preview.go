package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// preview is plan --base: the configuration (working directory, or
// --repo/--ref) against the one at --base in the same repository — the
// semantic config diff, head's plan against the cluster, and the capacity
// of both on the same live nodes. Capacity problems of head do not stop
// the preview (a pull request needs to see them) but end it with exit 1,
// as plan does.
func (g *globals) preview(ctx context.Context, f *planFlags, format string) error {
	st, done, err := g.newStack(f.repo, f.ref, connection{untrusted: true})
	if err != nil {
		return err
	}
	defer done()
	res, err := st.Preview(ctx, stack.PreviewOptions{Base: f.base, Adopt: f.adopt, BaseUnreadable: func(cfg *config.Config, errs hcl.Diagnostics) {
		textsafe.Fprintf(g.stderr, "Warning: the configuration at base %s cannot be read; the preview shows every block as added.\n\n", f.base)
		g.writeDiags(cfg, errs)
	}})
	if err != nil {
		return g.fail(err, "")
	}
	pv, p := res.Preview, res.Preview.Plan
	switch format {
	case formatJSON:
		err = render.PreviewJSON(g.stdout, pv)
	case formatMarkdown:
		err = g.writeComments(render.PreviewMarkdown(pv), p.Stack, f.outDir)
	default:
		err = render.PreviewText(g.stdout, pv, render.TextOptions{Color: g.color(g.stdout), Files: res.Config.Files})
	}
	if err != nil {
		return err
	}
	if f.out != "" && p.Summary.Conflicts == 0 && len(pv.CapacityProblems) == 0 {
		if err := g.savePlan(f, res.Config, p, res.Context); err != nil {
			return err
		}
	}
	if len(pv.CapacityProblems) > 0 {
		textsafe.Fprintf(g.stderr, "Error: the configuration does not fit the GPUs (see above); apply would refuse it.\n")
		return &exitError{code: 1}
	}
	return g.planExit(p, f.detailedExitCode)
}

// writeComments splits a preview's Markdown into pull request comments:
// into dir/comment-N.md, or to stdout each after a line
// "<!-- gpuform comment N/M -->". Stale comment files of an earlier, longer
// run are removed.
func (g *globals) writeComments(md, stack, dir string) error {
	parts := render.SplitComments(md, stack, render.MaxCommentSize)
	if dir == "" {
		return render.WriteComments(g.stdout, parts)
	}
	dir = g.path(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write comments: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "comment-*.md"))
	for _, o := range old {
		_ = os.Remove(o)
	}
	for i, part := range parts {
		name := filepath.Join(dir, fmt.Sprintf("comment-%d.md", i+1))
		if err := files.WriteAtomic(name, 0o644, func(w io.Writer) error { _, err := textsafe.Fprint(w, part.String()); return err }); err != nil {
			return fmt.Errorf("write comments: %w", err)
		}
	}
	textsafe.Fprintf(g.stdout, "Wrote %d %s to %s.\n", len(parts), render.PluralWord(len(parts), "comment", "comments"), dir)
	return nil
}
