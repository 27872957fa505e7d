package stack

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// ApplyOptions tune Apply, ApplyPlan and Fix.
type ApplyOptions struct {
	// Adopt takes over existing objects in the way instead of failing.
	Adopt bool
	// Destroy and Targets are as PlanOptions'.
	Destroy bool
	Targets []string
	// Safety are the limits a plan must respect (deletes, protected
	// namespaces, disruption of running GPU pods).
	Safety engine.SafetyOptions
	// Engine tunes the apply walk: parallelism, progress, MIG timeout,
	// retries.
	Engine engine.ApplyOptions
	// LockHolder identifies this run in the stack's lock ("" lets the
	// cluster pick, e.g. user@host pid N); LockWait is how long to wait for
	// a held lock (zero fails at once).
	LockHolder string
	LockWait   time.Duration
	// Planned, when set, is called with the plan made under the lock and
	// the configuration it was made from (nil for a saved plan), before the
	// plan is checked (apply shows it there); an error ends the call.
	Planned func(*config.Config, *engine.Plan) error
	// Approve, when set, is called once the plan passed its checks and has
	// changes, before the first one starts; an error ends the call with
	// nothing changed (apply asks for "yes" there).
	Approve func(context.Context, *engine.Plan) error
	// LockLost, when set, is called if the lock is lost while held, with
	// why: no new change starts after it and requests in flight are cut.
	LockLost func(*engine.LockLostError)
	// PlanKey checks a saved plan's signature (ApplyPlan; see
	// engine.PlanFile.Authenticate); nil when no key is configured.
	PlanKey engine.PlanKey
	// Binding checks a signed saved plan's ref and age (ApplyPlan; see
	// engine.PlanFile.CheckBinding); nil checks neither.
	Binding *engine.PlanBinding
}

// ApplyResult is what an apply did.
type ApplyResult struct {
	// Plan is the plan made under the lock (or the saved plan).
	Plan *engine.Plan
	// Report accounts for every change; nil when nothing was applied (no
	// changes, or the call ended before the first).
	Report *engine.Report
	// Stopped is why the apply was cut short (the context's cause: Ctrl-C,
	// a deadline, a lost lock); nil when it was not.
	Stopped error
	// LockID is the stack's lock; UnlockErr is why releasing it failed
	// (nil: released).
	LockID    string
	UnlockErr error
}

// OK reports whether every change was applied and the apply ran to its end.
func (r *ApplyResult) OK() bool {
	return r.Report == nil || (r.Report.OK() && r.Stopped == nil)
}

// Apply takes the stack's lock, plans under it, checks the plan (conflicts
// are an *engine.ConflictError, broken safety limits an *engine.UnsafeError), asks
// opts.Approve, and applies the changes in dependency order. A failed
// change skips its dependents and lets independent changes go on: see
// Report.
//
// Once the lock was taken the result is not nil, even with an error: it
// says whether the lock was released.
func (s *Stack) Apply(ctx context.Context, opts ApplyOptions) (*ApplyResult, error) {
	head, cl, err := s.compileOpen(ctx, planMode())
	if err != nil {
		return nil, err
	}
	return s.locked(ctx, cl, head.desired.Stack, opts, func(ctx context.Context, f fence, res *ApplyResult) error {
		d, err := s.refreshDiff(ctx, cl, head, PlanOptions{Adopt: opts.Adopt, Destroy: opts.Destroy, Targets: opts.Targets})
		if err != nil {
			return err
		}
		p := d.plan
		p.ConfigSource = configSource(head.origin)
		res.Plan = p
		if err := s.assess(ctx, cl, head.cfg, d); err != nil {
			return err
		}
		if opts.Planned != nil {
			if err := opts.Planned(head.cfg, p); err != nil {
				return err
			}
		}
		return execute(ctx, cl, p, d.live, opts, f, res)
	})
}

// ApplyPlan applies a saved plan exactly, without reading the
// configuration, on the cluster Connect opens for no configuration. It
// trusts the file for nothing it can check: the signature first
// (opts.PlanKey) and a signed plan's ref and age (opts.Binding), before
// any cluster call; then, under the lock, that the
// cluster is the one the plan was made against (else an *engine.WrongClusterError),
// that nothing the plan read has changed since (else an *engine.StalePlanError),
// that every change is one gpuform would make to the stack as it is now
// (else an *engine.UntrustedPlanError: see engine.Recheck), and the pods a
// re-partitioning disrupts, read again. The result is as Apply's.
func (s *Stack) ApplyPlan(ctx context.Context, pf *engine.PlanFile, opts ApplyOptions) (*ApplyResult, error) {
	if err := pf.Authenticate(opts.PlanKey); err != nil {
		return nil, err
	}
	if opts.Binding != nil {
		if err := pf.CheckBinding(*opts.Binding); err != nil {
			return nil, err
		}
	}
	cl, err := s.open(ctx, nil)
	if err != nil {
		return nil, err
	}
	return s.locked(ctx, cl, pf.Stack, opts, func(ctx context.Context, f fence, res *ApplyResult) error {
		p := pf.Plan()
		res.Plan = p
		desired := &engine.Desired{Stack: pf.Stack, Kinds: engine.ManagedKinds()}
		for _, c := range p.Changes {
			if c.After != nil {
				desired.Objects = append(desired.Objects, &engine.Object{Address: c.Address, Object: c.After})
			}
		}
		live, err := cl.Refresh(ctx, desired, engine.RefreshOptions{})
		if err != nil {
			return err
		}
		if live.Source != pf.Source {
			return &engine.WrongClusterError{Planned: pf.Source, Reached: live.Source}
		}
		if stale := pf.StaleObjects(live); len(stale) > 0 {
			return &engine.StalePlanError{Objects: stale}
		}
		if err := engine.Recheck(p, live, nil, opts.Adopt); err != nil {
			return err
		}
		// The nodes the plan re-partitions, and those where it found pods
		// that a pool's move between the device plugin and DRA disrupts.
		nodes := engine.RepartitionedNodes(p)
		for n := range p.Disruption {
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
		if p.Disruption, err = gpuPods(ctx, cl, nodes); err != nil {
			return err
		}
		if opts.Planned != nil {
			if err := opts.Planned(nil, p); err != nil {
				return err
			}
		}
		return execute(ctx, cl, p, live, opts, f, res)
	})
}

// locked runs fn under the stack's lock, with a context that is cancelled
// when the lock is lost (its cause a *engine.LockLostError, so that no new
// change starts and requests in flight are cut) and the lock's fence, and
// releases the lock after, even when ctx was cancelled. fn starts once the
// lock is writable (HeldLock.WritableAt): what it reads, no earlier holder
// is still changing.
func (s *Stack) locked(ctx context.Context, cl Cluster, name string, opts ApplyOptions, fn func(context.Context, fence, *ApplyResult) error) (*ApplyResult, error) {
	held, err := cl.Lock(ctx, name, opts.LockHolder, opts.LockWait)
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{LockID: held.ID}
	f := fence{held: held, stack: name}
	lctx, cancel := context.WithCancelCause(ctx)
	var once sync.Once
	lose := func() {
		once.Do(func() {
			lost := f.lost()
			if opts.LockLost != nil {
				opts.LockLost(lost)
			}
			cancel(lost)
		})
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-held.Lost:
			lose()
		case <-stop:
		}
	}()
	f.settle(lctx)
	err = fn(lctx, f, res)
	close(stop)
	if f.check() != nil {
		lose() // lost while fn ran, and seen by the fence first
	}
	cancel(nil)
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	res.UnlockErr = held.Release(rctx)
	return res, err
}

// fence is what a run must respect before it writes under the lock of
// stack.
type fence struct {
	held  HeldLock
	stack string
}

// check is nil while the run may write, else why not.
func (f fence) check() error {
	if f.held.Err == nil {
		return nil
	}
	return f.held.Err()
}

// lost is why the lock was lost, once Lost is closed.
func (f fence) lost() *engine.LockLostError {
	var lost *engine.LockLostError
	if !errors.As(f.check(), &lost) {
		lost = &engine.LockLostError{Stack: f.stack, ID: f.held.ID, Reason: "the cluster reported it lost"}
	}
	return lost
}

// settle waits until the lock is writable (see HeldLock.WritableAt), or
// until ctx ends.
func (f fence) settle(ctx context.Context) {
	d := time.Until(f.held.WritableAt)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// check refuses plans with conflicts or that break the safety limits.
func check(p *engine.Plan, safety engine.SafetyOptions) error {
	if p.Summary.Conflicts > 0 {
		return &engine.ConflictError{Conflicts: p.Summary.Conflicts}
	}
	if reasons := engine.Unsafe(p, safety); len(reasons) > 0 {
		return &engine.UnsafeError{Reasons: reasons}
	}
	return nil
}

// execute checks p, asks for approval and applies it under the lock's
// fence (no write once the lock is lost), recording the report and why it
// stopped in res, then writes the stack's record (see record); live is
// what p was made or re-checked from.
func execute(ctx context.Context, cl Cluster, p *engine.Plan, live *engine.Live, opts ApplyOptions, f fence, res *ApplyResult) error {
	if err := check(p, opts.Safety); err != nil {
		return err
	}
	if !p.HasChanges() {
		if live.Inventory == nil {
			// A stack without a record yet gets one, changes or not.
			return record(ctx, cl, p, live, nil, nil, f, -1)
		}
		return nil
	}
	if opts.Approve != nil {
		if err := opts.Approve(ctx, p); err != nil {
			return err
		}
	}
	seq, err := announce(ctx, cl, p, live, f)
	if err != nil {
		return err
	}
	eopts := opts.Engine
	eopts.Fence = f.check
	rt := &recordingTarget{Cluster: cl, uids: map[engine.Key]string{}}
	res.Report = engine.Apply(ctx, p, rt, eopts)
	switch lost := f.check(); {
	case ctx.Err() != nil:
		res.Stopped = context.Cause(ctx)
	case lost != nil:
		res.Stopped = lost
	}
	return record(ctx, cl, p, live, res.Report, rt.uids, f, seq)
}
