package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// baseline is gpuform built from another commit (-baseline REF), measured
// alongside the working tree's build so that a change can be judged
// before/after in one run, on the same machine state.
type baseline struct {
	// ref is the git ref as given (e.g. main~5); commit is the short hash it
	// resolved to when built.
	ref, commit string
	// bin is the built binary.
	bin string
}

// label names the baseline in the report: "main~5 (abc1234)".
func (bl *baseline) label() string {
	if bl.ref == bl.commit {
		return "`" + bl.ref + "`"
	}
	return fmt.Sprintf("`%s` (%s)", bl.ref, bl.commit)
}

// baselineResult is what one size measured of the baseline: the same
// no-op plan and apply from empty as the working tree's build, interleaved
// with it.
type baselineResult struct {
	applyG, planNoop    sample
	applyRSS, planRSS   int64
	applyReqs, planReqs int
	// planChanges is the number of changes a baseline plan found on the
	// cluster the working tree's build applied (the last one that found
	// any): 0 when every one was a no-op, as when both builds render the
	// same objects.
	planChanges int
}

// buildBaseline builds ./cmd/gpuform of the commit ref names in the git
// repository root into work/gpuform-baseline. The commit's tree is exported
// with git archive into a temporary directory under work (removed after the
// build), so neither the working tree nor the repository's list of
// worktrees is touched, and uncommitted changes are not part of it.
func buildBaseline(ctx context.Context, root, work, ref string) (*baseline, error) {
	full, err := git(ctx, root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("resolve the baseline ref %q: %w", ref, err)
	}
	short, err := git(ctx, root, "rev-parse", "--short", full)
	if err != nil {
		return nil, fmt.Errorf("resolve the baseline ref %q: %w", ref, err)
	}
	src, err := os.MkdirTemp(work, "baseline-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(src)
	if err := exportTree(ctx, root, full, src); err != nil {
		return nil, fmt.Errorf("export %s (%s): %w", ref, short, err)
	}
	bin := filepath.Join(work, "gpuform-baseline")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gpuform")
	var stderr bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = src, os.Stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build the baseline gpuform of %s (%s): %w\n%s", ref, short, err, trim(stderr.String()))
	}
	return &baseline{ref: ref, commit: short, bin: bin}, nil
}

// git runs git in dir and returns its trimmed standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// exportTree writes the tree of commit in the repository root into dir
// (git archive | tar -x).
func exportTree(ctx context.Context, root, commit, dir string) error {
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", commit)
	archive.Dir = root
	var archiveErr, tarErr bytes.Buffer
	archive.Stderr = &archiveErr
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	untar.Stderr = &tarErr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	if err := archive.Start(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	if err := untar.Run(); err != nil {
		archive.Wait()
		return fmt.Errorf("tar -x: %w %s", err, strings.TrimSpace(tarErr.String()))
	}
	if err := archive.Wait(); err != nil {
		return fmt.Errorf("git archive: %w %s", err, strings.TrimSpace(archiveErr.String()))
	}
	return nil
}

// baselineTable renders the working tree's build against the baseline's as
// Markdown: for each size, the no-op plan and the apply from empty, their
// medians and the ratio this tree / baseline (under 1: this tree is faster).
func baselineTable(rs []*sizeResult, bl *baseline) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n#### This tree against the baseline %s (seconds: median, min–max)\n\n", bl.label())
	b.WriteString("Both builds measured interleaved on the same clusters: each apply from empty on a fresh copy " +
		"of the template (baseline, then this tree), each no-op plan on the cluster this tree applied " +
		"(this tree first in odd runs, the baseline first in even ones). A ratio under 1.00x: this tree is faster.\n\n")
	b.WriteString("| size | objects | measurement | this tree | baseline | this tree / baseline | requests (this tree / baseline) | peak RSS (this tree / baseline) |\n")
	b.WriteString("|---|---:|---|---|---|---:|---:|---:|\n")
	for _, r := range rs {
		if r.base == nil {
			continue
		}
		planBase := cell(r.base.planNoop)
		if r.base.planChanges != 0 {
			planBase += fmt.Sprintf(" (not a no-op: %d changes)", r.base.planChanges)
		}
		fmt.Fprintf(&b, "| %s | %d | plan, no-op | %s | %s | %s | %d / %d | %d MB / %d MB |\n",
			r.size.Name, r.objects, cell(r.planNoop), planBase,
			ratio2(r.planNoop.median(), r.base.planNoop.median()),
			r.planReqs, r.base.planReqs, r.planNoopRSS>>20, r.base.planRSS>>20)
		fmt.Fprintf(&b, "| %s | %d | apply from empty | %s | %s | %s | %d / %d | %d MB / %d MB |\n",
			r.size.Name, r.objects, cell(r.applyG), cell(r.base.applyG),
			ratio2(r.applyG.median(), r.base.applyG.median()),
			r.applyReqs, r.base.applyReqs, r.applyRSS>>20, r.base.applyRSS>>20)
	}
	return b.String()
}

// ratio2 is a/b as "0.97x" (two decimals: a before/after ratio sits near 1).
func ratio2(a, b time.Duration) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2fx", ratio(a, b))
}
