package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// failingTarget answers every call with err, or, when hang is set, blocks
// until the call's context ends (a hung API server).
type failingTarget struct {
	mu      sync.Mutex
	calls   int
	err     error
	hang    bool
	started chan struct{}
}

func (f *failingTarget) call(ctx context.Context) error {
	f.mu.Lock()
	f.calls++
	first := f.calls == 1
	f.mu.Unlock()
	if f.hang {
		if first && f.started != nil {
			close(f.started)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	return f.err
}

func (f *failingTarget) Apply(ctx context.Context, _ *unstructured.Unstructured, _ bool) error {
	return f.call(ctx)
}

func (f *failingTarget) ApplyWhole(ctx context.Context, _ *unstructured.Unstructured) error {
	return f.call(ctx)
}

func (f *failingTarget) ApplyNode(ctx context.Context, _ *unstructured.Unstructured, _, _ string) error {
	return f.call(ctx)
}

func (f *failingTarget) Delete(ctx context.Context, _ engine.Key, _ string) error { return f.call(ctx) }

func (f *failingTarget) WaitNode(ctx context.Context, _, _ string) error { return f.call(ctx) }

func (f *failingTarget) ProbeEnforced(context.Context, string, []string) error { return nil }

func TestApplyStopsWhenTheServerKeepsFailing(t *testing.T) {
	tests := []struct {
		name string
		err  error
		// wantFailed is how many changes fail; the rest are skipped
		// (-1: every change fails, none is skipped).
		wantFailed int
	}{
		{"transient errors: stop after 3 changes", apierrors.NewServiceUnavailable("down"), 3},
		{"permanent errors: every change is tried", invalid(), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := enginetest.Quickstart(t)
			p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
			ft := &failingTarget{err: tt.err}
			rep := engine.Apply(context.Background(), p, ft, engine.ApplyOptions{Parallelism: 1, Retry: engine.Retry{Attempts: 2, Base: time.Millisecond}})
			failed, skipped := rep.Count(engine.OutcomeFailed), rep.Count(engine.OutcomeSkipped)
			if failed+skipped != len(p.Changes) {
				t.Fatalf("%d failed + %d skipped, want all %d changes accounted for", failed, skipped, len(p.Changes))
			}
			if tt.wantFailed < 0 {
				// Dependents of a failed change are skipped, but nothing
				// is skipped for a failing server.
				for _, r := range rep.Results {
					var sf *engine.ServerFailingError
					if errors.As(r.Err, &sf) {
						t.Fatalf("%s skipped as if the server were failing: %v", r.Change.Key, r.Err)
					}
				}
				return
			}
			if failed != tt.wantFailed || ft.calls != 2*tt.wantFailed {
				t.Errorf("%d changes failed with %d calls, want %d and %d", failed, ft.calls, tt.wantFailed, 2*tt.wantFailed)
			}
			var why *engine.ServerFailingError
			for _, r := range rep.Results {
				if r.Outcome == engine.OutcomeSkipped && !errors.As(r.Err, &why) && !strings.Contains(r.Err.Error(), "depends on") {
					t.Errorf("%s skipped for %v, want the failing server or a failed dependency", r.Change.Key, r.Err)
				}
			}
			if why == nil || why.Failures != 3 || !strings.Contains(why.Error(), "API server looks unavailable") {
				t.Errorf("skip reason %v", why)
			}
		})
	}
}

func TestApplyCutsAHungRequestAfterTheGrace(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	ft := &failingTarget{hang: true, started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ft.started
		cancel()
	}()
	start := time.Now()
	rep := engine.Apply(ctx, p, ft, engine.ApplyOptions{Parallelism: 1, InterruptGrace: 100 * time.Millisecond, RequestTimeout: time.Hour})
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("apply took %s to stop with a hung request and a 100ms grace", el)
	}
	if rep.Count(engine.OutcomeFailed) != 1 || rep.Count(engine.OutcomeSkipped) != len(p.Changes)-1 {
		t.Fatalf("%d failed, %d skipped; want the one in flight failed and the rest skipped", rep.Count(engine.OutcomeFailed), rep.Count(engine.OutcomeSkipped))
	}
	for _, r := range rep.Results {
		if r.Outcome == engine.OutcomeFailed && !strings.Contains(r.Err.Error(), "may or may not have been applied") {
			t.Errorf("the cut request's error does not say its write is uncertain: %v", r.Err)
		}
		if r.Outcome == engine.OutcomeSkipped && !errors.Is(r.Err, engine.ErrInterrupted) && !strings.Contains(r.Err.Error(), "depends on") {
			t.Errorf("%s skipped for %v, want ErrInterrupted or a failed dependency", r.Change.Key, r.Err)
		}
	}
}

// A lost lock stops the writes: the fence, asked before every write, stops
// the apply at once (no change starts after it says so), and a lock lost
// while a request hangs cuts that request without the Ctrl-C grace, since
// another run may be writing.
func TestApplyStopsWritingWhenTheLockIsLost(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	lost := &engine.LockLostError{Stack: "quickstart", ID: "abc", Reason: "its Lease was deleted"}

	t.Run("the fence says lost after two writes", func(t *testing.T) {
		r := newRecorder()
		var mu sync.Mutex
		asked := 0
		fence := func() error {
			mu.Lock()
			defer mu.Unlock()
			if asked++; asked > 2 {
				return lost
			}
			return nil
		}
		rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: 1, Fence: fence})
		if len(r.started) != 2 {
			t.Errorf("%d writes, want the 2 the fence allowed", len(r.started))
		}
		if rep.Count(engine.OutcomeApplied) != 2 || rep.Count(engine.OutcomeSkipped) != len(rep.Results)-2 {
			t.Errorf("%d applied, %d skipped of %d", rep.Count(engine.OutcomeApplied), rep.Count(engine.OutcomeSkipped), len(rep.Results))
		}
		for _, res := range rep.Results {
			if res.Outcome == engine.OutcomeSkipped && !strings.Contains(res.Err.Error(), "lost the lock of stack quickstart (lock ID abc)") && !strings.Contains(res.Err.Error(), "depends on") {
				t.Errorf("%s skipped for %v, want the lost lock", res.Change.Key, res.Err)
			}
		}
	})

	t.Run("lost while a request hangs", func(t *testing.T) {
		ft := &failingTarget{hang: true, started: make(chan struct{})}
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() {
			<-ft.started
			cancel(lost)
		}()
		start := time.Now()
		rep := engine.Apply(ctx, p, ft, engine.ApplyOptions{Parallelism: 1, InterruptGrace: 5 * time.Second, RequestTimeout: 5 * time.Second})
		if el := time.Since(start); el > time.Second {
			t.Fatalf("apply took %s to stop after the lock was lost, with a request hung", el)
		}
		if rep.Count(engine.OutcomeFailed) != 1 {
			t.Fatalf("%d failed, want the one in flight", rep.Count(engine.OutcomeFailed))
		}
		for _, res := range rep.Results {
			if res.Outcome == engine.OutcomeFailed && !strings.Contains(res.Err.Error(), "cut when the lock was lost, so it may or may not have been applied") {
				t.Errorf("the cut request says %v", res.Err)
			}
		}
	})
}
