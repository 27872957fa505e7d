package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Budget is the soft memory limit gpuform keeps outside a container (see
// Tune): a no-op plan of 47,516 objects (the benchmark's size L) then
// peaks under 500 MB of resident memory.
const Budget = 400 << 20

// liveMetric is the heap the last collection found reachable.
const liveMetric = "/gc/heap/live:bytes"

// Tune keeps the runtime's soft memory limit at the larger of budget and
// one and a half times the heap the last collection found live, adjusted
// after every collection, until stop is called. Below the budget the
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
// It changes nothing when GOMEMLIMIT was set (getenv; GOMEMLIMIT=off turns
// the budget off) or a container's limit applies (Set returned one): those
// are hard bounds, not a budget.
func Tune(budget int64, getenv func(string) string) (stop func()) {
	if getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	t := &tuner{budget: budget}
	t.adjust()
	t.arm()
	return func() {
		t.stopped.Store(true)
		debug.SetMemoryLimit(t.before)
	}
}

// tuner sets the memory limit after each collection: a finalizer on an
// object nothing references runs once the collection that found it
// unreachable ends, and re-arms with a new one.
type tuner struct {
	budget  int64
	before  int64
	stopped atomic.Bool
	sample  [1]metrics.Sample
}

// sentinel is the object whose finalizer marks the end of a collection.
type sentinel struct{ _ [16]byte }

func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.stopped.Load() {
			return
		}
		t.adjust()
		t.arm()
	})
}

// adjust sets the limit from the live heap.
func (t *tuner) adjust() {
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

// LimitFor is the limit Tune sets for a live heap of live bytes: budget, or
// live plus half of it when that is larger.
func LimitFor(budget, live int64) int64 {
	return max(budget, live+live/2)
}
