package render_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
)

// applyReport is an apply that created a namespace, failed to update a
// quota and skipped the quota's dependent.
func applyReport() *engine.Report {
	ns := &engine.Change{Address: "tenant.a", Key: engine.Key{Kind: "Namespace", Name: "a"}, Action: engine.ActionCreate}
	quota := &engine.Change{Address: "tenant.a", Key: engine.Key{Kind: "ResourceQuota", Namespace: "a", Name: "gpuform"}, Action: engine.ActionUpdate}
	binding := &engine.Change{Address: "tenant.a", Key: engine.Key{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "a", Name: "admin"}, Action: engine.ActionCreate}
	return &engine.Report{Results: []*engine.Result{
		{Change: ns, Outcome: engine.OutcomeApplied, Elapsed: 1200 * time.Millisecond},
		{Change: quota, Outcome: engine.OutcomeFailed, Err: errors.New("quota:\n  forbidden"), Elapsed: 300 * time.Millisecond},
		{Change: binding, Outcome: engine.OutcomeSkipped, Err: errors.New("depends on a failed change")},
	}}
}

// fakeClock is a clock that moves step at each reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// Progress of a small apply: a line as each change starts and ends; on a
// terminal also a status line (done, failed, remaining, rate, time left),
// erased before the next line.
func TestApplyProgress(t *testing.T) {
	rep := applyReport()
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		p := &render.ApplyProgress{W: &b, TTY: tty, Now: fakeClock(time.Second)}
		p.Event(engine.Event{Kind: engine.EventStart, Change: rep.Results[0].Change, Total: 3})
		for i, r := range rep.Results {
			p.Event(engine.Event{Kind: engine.EventDone, Change: r.Change, Result: r, Done: i + 1, Total: 3})
		}
		p.Clear()
		want := "tenant.a: Creating Namespace a...\n" +
			"tenant.a: Creation complete after 1.2s [Namespace a]\n" +
			"tenant.a: Failed to modify ResourceQuota a/gpuform after 0.3s\n" +
			"tenant.a: Skipped RoleBinding a/admin: depends on a failed change\n"
		got := b.String()
		if tty {
			for _, w := range []string{
				"  [0/3 done, 0 failed, 3 remaining]\r\x1b[K",
				"  [1/3 done, 0 failed, 2 remaining, 1.0/s, about 2s left]\r\x1b[K",
				"  [2/3 done, 1 failed, 1 remaining, 1.0/s, about 1s left]\r\x1b[K",
				"  [3/3 done, 1 failed, 1 skipped, finished in 3s]\r\x1b[K",
			} {
				if !strings.Contains(got, w) {
					t.Errorf("tty: no erased status line %q:\n%q", w, got)
				}
			}
			got = regexp.MustCompile(`  \[[^]]*\]\r\x1b\[K`).ReplaceAllString(strings.TrimPrefix(got, "\r\x1b[K"), "")
		}
		if got != want {
			t.Errorf("tty %v: progress\n%q\nwant\n%q", tty, got, want)
		}
	}
}

// largeApply feeds p the events of an apply of n changes, one starting and
// one ending every step of the clock, the change numbered fail failing.
func largeApply(p *render.ApplyProgress, n, fail int) {
	for i := range n {
		c := &engine.Change{Address: "tenant.t", Key: engine.Key{Kind: "Namespace", Name: fmt.Sprintf("t%d", i)}, Action: engine.ActionCreate}
		p.Event(engine.Event{Kind: engine.EventStart, Change: c, Done: i, Total: n})
		r := &engine.Result{Change: c, Outcome: engine.OutcomeApplied, Elapsed: time.Second}
		if i == fail {
			r.Outcome, r.Err = engine.OutcomeFailed, errors.New("forbidden")
		}
		p.Event(engine.Event{Kind: engine.EventDone, Change: c, Result: r, Done: i + 1, Total: n})
	}
}

// A large apply without a terminal (CI) writes a summary line at every
// tenth of its changes and every 10 seconds, never a line per change
// unless Verbose; on a terminal one status line redrawn in place.
func TestApplyProgressLarge(t *testing.T) {
	t.Run("CI", func(t *testing.T) {
		var b bytes.Buffer
		// 1,000 changes, two clock readings each at 10ms: 20s in all.
		largeApply(&render.ApplyProgress{W: &b, Now: fakeClock(10 * time.Millisecond)}, 1000, 3)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) < 10 || len(lines) > 13 {
			t.Errorf("%d lines, want one per tenth and per 10s:\n%s", len(lines), b.String())
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "Progress: ") {
				t.Errorf("line %q is not a summary", l)
			}
		}
		for _, w := range []string{
			"Progress: 100/1000 done, 1 failed, 900 remaining, 50/s, about 18s left\n",
			"Progress: 1000/1000 done, 1 failed, finished in 20s\n",
		} {
			if !strings.Contains(b.String(), w) {
				t.Errorf("no %q in\n%s", w, b.String())
			}
		}
	})
	t.Run("CI slow", func(t *testing.T) {
		var b bytes.Buffer
		// 100 changes at 3s each: a tenth every 30s, a line every 10s.
		largeApply(&render.ApplyProgress{W: &b, Now: fakeClock(1500 * time.Millisecond)}, 100, -1)
		if n := strings.Count(b.String(), "\n"); n < 25 || n > 40 {
			t.Errorf("%d lines for 300s, want about one per 10s:\n%s", n, b.String())
		}
	})
	t.Run("verbose", func(t *testing.T) {
		var b bytes.Buffer
		largeApply(&render.ApplyProgress{W: &b, Verbose: true, Now: fakeClock(10 * time.Millisecond)}, 1000, -1)
		if n := strings.Count(b.String(), "Creation complete after"); n != 1000 {
			t.Errorf("%d per-change lines with Verbose, want 1000", n)
		}
	})
	t.Run("terminal", func(t *testing.T) {
		var b bytes.Buffer
		largeApply(&render.ApplyProgress{W: &b, TTY: true, Now: fakeClock(10 * time.Millisecond)}, 1000, -1)
		out := b.String()
		if strings.Contains(out, "\n") || strings.Contains(out, "Creating") {
			t.Errorf("the terminal got lines, want one status line redrawn in place:\n%.300q", out)
		}
		if n := strings.Count(out, "\r\x1b[K"); n != 2000 {
			t.Errorf("%d redraws, want one per event", n)
		}
		if !strings.HasSuffix(out, "\r\x1b[K  [1000/1000 done, 0 failed, finished in 20s]") {
			t.Errorf("last status: %q", out[max(0, len(out)-80):])
		}
	})
}

// The account: one line when every change was applied; else what failed
// and was skipped, and why the run stopped.
func TestApplyAccount(t *testing.T) {
	var ok bytes.Buffer
	complete := &engine.Report{Results: applyReport().Results[:1]}
	if err := render.ApplyComplete(&ok, complete, false, false); err != nil {
		t.Fatal(err)
	}
	if want := "\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n"; ok.String() != want {
		t.Errorf("complete = %q, want %q", ok.String(), want)
	}
	ok.Reset()
	_ = render.ApplyComplete(&ok, complete, false, true)
	if !strings.Contains(ok.String(), "\x1b[1;32mApply complete!") {
		t.Errorf("no colour: %q", ok.String())
	}
	// A destroy says so, as Terraform's does.
	gone := &engine.Report{Results: []*engine.Result{{Change: &engine.Change{Action: engine.ActionDelete}, Outcome: engine.OutcomeApplied}, {Change: &engine.Change{Action: engine.ActionDelete}, Outcome: engine.OutcomeApplied}}}
	ok.Reset()
	_ = render.ApplyComplete(&ok, gone, true, false)
	if want := "\nDestroy complete! Resources: 2 destroyed.\n"; ok.String() != want {
		t.Errorf("destroy complete = %q, want %q", ok.String(), want)
	}
	for _, tt := range []struct {
		stopped error
		what    string
	}{
		{nil, "Error: Apply failed: 1 applied (1 added, 0 changed, 0 destroyed), 1 failed, 1 skipped."},
		{context.Canceled, "Error: Apply interrupted: 1 applied"},
		{fmt.Errorf("run: %w", &engine.RunTimeoutError{Limit: 6 * time.Second}), "Error: Apply stopped: the run exceeded --timeout 6s"},
	} {
		var b bytes.Buffer
		if err := render.ApplyFailed(&b, applyReport(), tt.stopped); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{tt.what, "  failed   ResourceQuota a/gpuform  tenant.a  quota: forbidden", "quota: forbidden", "  skipped  RoleBinding a/admin      tenant.a  depends on a failed change", "  applied  1 objects", "run apply again: it converges"} {
			if !strings.Contains(b.String(), w) {
				t.Errorf("stopped %v: account lacks %q:\n%s", tt.stopped, w, b.String())
			}
		}
	}
}

// The catalog lists every model, with a profile table for MIG ones; the
// inventory table has a row per node.
func TestCatalogAndInventory(t *testing.T) {
	var b bytes.Buffer
	if err := render.Catalog(&b, mig.Default().GPUs()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"A100-80GB  (", "MIG: 7 compute slices, 8 memory slots", "3g.40gb", "time-slicing only"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("catalog lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	nodes := []capacity.NodeInventory{
		{Node: "gpu-0", Model: "A100-80GB", GPUs: 4, Driver: "550.54.15", MIG: map[string]int{"3g.40gb": 8, "1g.10gb": 2}, Source: "agent"},
		{Node: "gpu-1", Model: "H100-80GB", GPUs: 8, Source: "labels"},
	}
	if err := render.Inventory(&b, nodes); err != nil {
		t.Fatal(err)
	}
	want := "NODE   GPU        COUNT  DRIVER     MIG INSTANCES             SOURCE\n" +
		"gpu-0  A100-80GB  4      550.54.15  2 x 1g.10gb, 8 x 3g.40gb  agent\n" +
		"gpu-1  H100-80GB  8      -          -                         labels\n"
	if b.String() != want {
		t.Errorf("inventory\n%s\nwant\n%s", b.String(), want)
	}
}

// The summary of a configuration counts each kind of block.
func TestConfigSummary(t *testing.T) {
	cfg := &config.Config{
		Settings:   &config.Settings{Stack: "s"},
		Priorities: []*config.Priority{{}},
		Pools:      []*config.Pool{{}, {}},
	}
	if got, want := render.ConfigSummary(cfg), "Stack s: 1 priority, 0 MIG layouts, 2 pools, 0 tenants, 0 models."; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}
