package memlimit

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Budget is the soft memory limit gpuform keeps outside a container (see
// Tune): a no-op plan of 47,517 objects (the benchmark's size L) then
// peaks under 500 MB of resident memory. At 400 MiB it peaked at 485-503
// MB once the refresh read its LISTs faster than compile took (their
// items wait raw meanwhile); at 360 MiB, 443-459 MB, 0.1-0.2 s slower.
const Budget = 360 << 20

// ApplyBudget is the budget of an apply (see Tuner.SetBudget): an apply's
// time goes to its writes, so it spends more of the CPU on collecting to
// stay smaller; an apply from empty of size L then peaks under 400 MB.
const ApplyBudget = 320 << 20

// liveMetric is the heap the last collection found reachable.
const liveMetric = "/gc/heap/live:bytes"

// Tune keeps the runtime's soft memory limit at the larger of budget and
// one and a half times the heap the last collection found live, adjusted
// after every collection, until the Tuner is stopped. Below the budget the
// collector paces itself by GOGC alone; near it, it collects more often
// rather than let the heap double; and once what is live outgrows the
// budget, the limit grows with it, so a larger configuration is never held
// at a limit it cannot fit (which would make the collector run without
// pause) and the heap stays within half again what is live.
//
// Between the budget and the live heap's needs the collector works harder
// (at size L a plan's CPU grows by about a tenth); should what is live
// need more than one and a half times itself (its spans' unused parts,
// stacks, metadata), the runtime caps the collector at half the CPU.
//
// It returns nil, changing nothing, when GOMEMLIMIT was set (getenv;
// GOMEMLIMIT=off turns the budget off); it is not called where a
// container's limit applies (Set returned one): those are hard bounds, not
// a budget. A nil *Tuner's methods do nothing.
func Tune(budget int64, getenv func(string) string) *Tuner {
	if getenv("GOMEMLIMIT") != "" {
		return nil
	}
	t := &Tuner{budget: budget}
	t.adjust()
	t.arm()
	return t
}

// Tuner keeps the soft memory limit at a budget that grows with the live
// heap (see Tune).
type Tuner struct {
	mu      sync.Mutex
	budget  int64
	before  int64
	stopped atomic.Bool
	sample  [1]metrics.Sample
}

// SetBudget changes the budget, from now on.
func (t *Tuner) SetBudget(budget int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.budget = budget
	t.mu.Unlock()
	t.adjust()
}

// Stop stops adjusting the limit and puts back the one before Tune.
func (t *Tuner) Stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped.Store(true)
	debug.SetMemoryLimit(t.before)
}

// sentinel is the object whose finalizer marks the end of a collection.
type sentinel struct{ _ [16]byte }

// arm adjusts the limit after the next collection: a finalizer on an
// object nothing references runs once the collection that found it
// unreachable ends, and arms again.
func (t *Tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.stopped.Load() {
			return
		}
		t.adjust()
		t.arm()
	})
}

// adjust sets the limit from the live heap.
func (t *Tuner) adjust() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	t.sample[0].Name = liveMetric
	metrics.Read(t.sample[:])
	var live int64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = int64(t.sample[0].Value.Uint64())
	}
	prev := debug.SetMemoryLimit(LimitFor(t.budget, live))
	if t.before == 0 {
		t.before = prev
	}
}

// tunerKey is the context key of the process's Tuner.
type tunerKey struct{}

// NewContext returns ctx carrying t, for the command that runs to change
// the budget (FromContext).
func NewContext(ctx context.Context, t *Tuner) context.Context {
	return context.WithValue(ctx, tunerKey{}, t)
}

// FromContext returns the Tuner ctx carries, or nil.
func FromContext(ctx context.Context) *Tuner {
	t, _ := ctx.Value(tunerKey{}).(*Tuner)
	return t
}

// LimitFor is the limit Tune sets for a live heap of live bytes: budget, or
// live plus half of it when that is larger.
func LimitFor(budget, live int64) int64 {
	return max(budget, live+live/2)
}
