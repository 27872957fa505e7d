package stack

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/drift"
)

// maxAppliedCommits bounds the configurations drift loads at the commits
// stamped on live objects.
const maxAppliedCommits = 32

// commitRE matches a full commit hash: what apply stamps from git.
var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// appliedEntry is the configuration at one applied commit.
type appliedEntry struct {
	when    time.Time
	desired *engine.Desired
	err     error
}

// errNotGit is the applied configuration of a stack outside git.
var errNotGit = errors.New("not in git")

// Drift reads the cluster and classifies every difference from the
// configuration (live-edit, unapplied, missing, hardware; see
// engine.Drift): the configurations at the commits stamped on live objects
// tell hand edits from changes not applied yet. It never writes.
func (s *Stack) Drift(ctx context.Context) (*drift.Report, error) {
	head, cl, err := s.compileOpen(ctx, compileMode{dropSyntax: true})
	if err != nil {
		return nil, err
	}
	return s.checkDrift(ctx, cl, head)
}

// FixResult is what Fix did.
type FixResult struct {
	// Apply is the apply under the lock; its Report is nil when the plan
	// under the lock had no changes.
	Apply *ApplyResult
	// After is the drift left, read under the lock after the apply; nil
	// when the apply failed or was stopped.
	After *drift.Report
}

// Fix removes drift: it applies the configuration as Apply does (lock,
// plan under the lock, capacity and safety checks, opts.Approve, ordered
// apply), then checks the drift again under the lock. What drifted in the
// hardware needs a person: Fix cannot remove it
// (drift.Report.Fixable). The result is as Apply's.
func (s *Stack) Fix(ctx context.Context, opts ApplyOptions) (*FixResult, error) {
	head, cl, err := s.compileOpen(ctx, compileMode{dropSyntax: true})
	if err != nil {
		return nil, err
	}
	fix := &FixResult{}
	res, err := s.locked(ctx, cl, head.desired.Stack, opts, func(ctx context.Context, f fence, res *ApplyResult) error {
		d, err := s.refreshDiff(ctx, cl, head, PlanOptions{})
		if err != nil {
			return err
		}
		p := d.plan
		res.Plan = p
		if p.HasChanges() || p.Summary.Conflicts > 0 {
			if err := s.assess(ctx, cl, head.cfg, d); err != nil {
				return err
			}
			if err := execute(ctx, cl, p, d.live, opts, f, res); err != nil || !res.OK() {
				return err
			}
		}
		fix.After, err = s.checkDrift(ctx, cl, head)
		return err
	})
	fix.Apply = res
	if res == nil {
		return nil, err
	}
	return fix, err
}

// checkDrift reads the cluster, plans and classifies.
func (s *Stack) checkDrift(ctx context.Context, cl Cluster, head *loaded) (*drift.Report, error) {
	live, err := cl.Refresh(ctx, head.desired, engine.RefreshOptions{})
	if err != nil {
		return nil, err
	}
	checked := time.Now()
	p, err := engine.Diff(head.desired, live, engine.DiffOptions{})
	if err != nil {
		return nil, fmt.Errorf("plan stack %s: %w", head.desired.Stack, err)
	}
	p.Warnings = append(p.Warnings, engine.PodWarnings(head.cfg, live)...)
	commit := head.origin.Stamp()
	applied, warnings := s.appliedConfigs(ctx, head, live)
	rep := drift.Classify(p, head.desired, live, commit, drift.Options{Applied: applied, Config: head.cfg, Catalog: s.opts.Catalog})
	rep.Warnings = append(rep.Warnings, warnings...)
	rep.CheckedAt = checked
	src := head.origin
	rep.ConfigSource = &src
	return rep, nil
}

// appliedConfigs compiles the configuration at every commit the stack's
// record says its live objects were applied from (at most maxAppliedCommits), newest first, with the
// Stack's own among them, and says which stamps could not be read.
func (s *Stack) appliedConfigs(ctx context.Context, head *loaded, live *engine.Live) ([]drift.AppliedConfig, []string) {
	commit := head.origin.Stamp()
	objects := map[string]int{}
	for k, u := range live.Objects {
		// The commit from the stack's record, not the object's annotation,
		// which whoever may edit the object may set.
		if st := live.AppliedCommit(k, u); st != "" && st != commit {
			objects[st]++
		}
	}
	stamps := make([]string, 0, len(objects))
	for st := range objects {
		stamps = append(stamps, st)
	}
	// The most used stamps first, so the cap drops the rarest.
	sort.Slice(stamps, func(i, j int) bool {
		if objects[stamps[i]] != objects[stamps[j]] {
			return objects[stamps[i]] > objects[stamps[j]]
		}
		return stamps[i] < stamps[j]
	})
	type entry struct {
		commit string
		when   time.Time
		d      *engine.Desired
	}
	var entries []entry
	if commit != "" {
		entries = append(entries, entry{commit: commit, when: refTime(head), d: head.desired})
	}
	var unread []string
	unreadObjects := 0
	for i, st := range stamps {
		e, ok := s.applied[st]
		if !ok {
			e = s.loadApplied(ctx, head, st, i)
			s.applied[st] = e
		}
		if e.desired == nil {
			unread = append(unread, drift.ShortCommit(st))
			unreadObjects += objects[st]
		}
		entries = append(entries, entry{commit: st, when: e.when, d: e.desired})
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i].when, entries[j].when
		if a.IsZero() != b.IsZero() {
			return !a.IsZero()
		}
		return a.After(b)
	})
	out := make([]drift.AppliedConfig, len(entries))
	for i, e := range entries {
		out[i] = drift.AppliedConfig{Commit: e.commit, Desired: e.d}
	}
	if len(unread) == 0 {
		return out, nil
	}
	sort.Strings(unread)
	return out, []string{fmt.Sprintf("%d %s applied from %s, whose configuration drift could not read (not a commit of this repository, a dirty work tree, or more than %d commits): for those, drift compared the commit stamps only",
		unreadObjects, plural(unreadObjects, "object was", "objects were"), strings.Join(limit(unread, 5), ", "), maxAppliedCommits)}
}

// refTime is when the Stack's configuration was made: its commit's time,
// now for a dirty work tree or when unknown (then it counts as the newest).
func refTime(head *loaded) time.Time {
	if head.origin.Dirty || head.when.IsZero() {
		return time.Now()
	}
	return head.when
}

// loadApplied compiles the configuration at commit st (the i-th stamp by
// use).
func (s *Stack) loadApplied(ctx context.Context, head *loaded, st string, i int) appliedEntry {
	switch {
	case head.origin.Commit == "":
		return appliedEntry{err: errNotGit}
	case !commitRE.MatchString(st):
		return appliedEntry{err: fmt.Errorf("%s is not a commit", st)}
	case i >= maxAppliedCommits:
		return appliedEntry{err: fmt.Errorf("over %d commits", maxAppliedCommits)}
	}
	files, err := s.src.Read(ctx, st)
	if err != nil {
		return appliedEntry{err: err}
	}
	e := appliedEntry{when: files.Time}
	cfg, diags := s.loadFiles(files)
	if diags.HasErrors() {
		e.err = diags
		return e
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		e.err = err
		return e
	}
	d.StampCommit(st)
	e.desired = d
	return e
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// limit keeps the first n of s and says how many more there were.
func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
}
