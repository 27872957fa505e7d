package stack_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
)

// fencedCluster is a cluster whose lock becomes writable at writable and
// is lost when lose is called.
type fencedCluster struct {
	stack.Cluster
	writable time.Time
	lost     chan struct{}
	once     sync.Once
}

func (f *fencedCluster) lose() { f.once.Do(func() { close(f.lost) }) }

func (f *fencedCluster) Lock(context.Context, string, string, time.Duration) (stack.HeldLock, error) {
	why := func() error {
		select {
		case <-f.lost:
			return &engine.LockLostError{Stack: "quickstart", ID: "feed", Reason: "its Lease was deleted"}
		default:
			return nil
		}
	}
	return stack.HeldLock{Release: func(context.Context) error { return nil }, ID: "feed", Lost: f.lost, Err: why, WritableAt: f.writable}, nil
}

// An apply under a lock that is not yet writable reads and writes nothing
// before it is; a lock lost during the apply stops it: the LockLost hook
// hears why once, nothing starts after, and the result's Stopped is the
// *engine.LockLostError.
func TestApplyUnderTheLocksFence(t *testing.T) {
	dir, cl := quickstart(t)
	fc := &fencedCluster{Cluster: cl, writable: time.Now().Add(500 * time.Millisecond), lost: make(chan struct{})}
	opts := applyOpts()
	opts.Engine.Parallelism = 1
	var firstStart time.Time
	started := 0
	opts.Engine.Progress = func(ev engine.Event) {
		if ev.Kind != engine.EventStart {
			return
		}
		if started++; started == 1 {
			firstStart = time.Now()
		}
		if started == 2 {
			fc.lose()
		}
	}
	var heard []*engine.LockLostError
	opts.LockLost = func(l *engine.LockLostError) { heard = append(heard, l) }
	res, err := stack.New(stack.Dir(dir), stack.Using(fc), stack.Options{}).Apply(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if firstStart.Before(fc.writable) {
		t.Errorf("the first change started %s before the lock was writable", fc.writable.Sub(firstStart))
	}
	var lost *engine.LockLostError
	if !errors.As(res.Stopped, &lost) || lost.ID != "feed" {
		t.Errorf("stopped for %v, want the lost lock", res.Stopped)
	}
	if len(heard) != 1 || heard[0].ID != "feed" {
		t.Errorf("LockLost heard %v, want the lost lock once", heard)
	}
	if started != 2 || res.OK() || res.Report.Count(engine.OutcomeSkipped) != len(res.Report.Results)-2 {
		t.Errorf("%d changes started, %d skipped of %d: want 2 started and every other one skipped", started, res.Report.Count(engine.OutcomeSkipped), len(res.Report.Results))
	}
}
