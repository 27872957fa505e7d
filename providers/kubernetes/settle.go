package kubernetes

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// settleGate hands the decoders of a refresh's LISTs the engine.Settler of
// the desired objects once they exist (Refresh is called): until then the
// stack's items wait as their raw JSON, which decoding would not make
// smaller, and are decoded and settled at once after. A prefetch's LISTs
// start with the gate closed; a refresh without one opens it first.
type settleGate struct {
	state  atomic.Pointer[gateState]
	opened chan struct{}
	once   sync.Once
}

// gateState is what an open gate settles with: nil settles nothing.
type gateState struct{ s *engine.Settler }

// newSettleGate returns a closed gate.
func newSettleGate() *settleGate { return &settleGate{opened: make(chan struct{})} }

// open opens the gate with s (nil: decode, settling nothing); only the
// first call counts.
func (g *settleGate) open(s *engine.Settler) {
	g.once.Do(func() {
		g.state.Store(&gateState{s: s})
		close(g.opened)
	})
}

// settler returns the gate's Settler and whether the gate is open; a nil
// gate is open and settles nothing.
func (g *settleGate) settler() (*engine.Settler, bool) {
	if g == nil {
		return nil, true
	}
	st := g.state.Load()
	if st == nil {
		return nil, false
	}
	return st.s, true
}

// listItem is one item of a LIST: decoded (obj; settled when the Settler
// found it unchanged and obj is its slim copy), or, while its gate was
// closed, its raw JSON.
type listItem struct {
	obj     *unstructured.Unstructured
	raw     []byte
	settled bool
}

// listItem decodes raw, settling it when gate is open with a Settler, or
// keeps it raw while gate is closed.
func (d *decoder) listItem(raw []byte, gvk schema.GroupVersionKind, trim bool, gate *settleGate) (listItem, error) {
	s, open := gate.settler()
	if !open {
		return listItem{raw: raw}, nil
	}
	u, err := d.item(raw, gvk, trim)
	if err != nil {
		return listItem{}, err
	}
	if s == nil {
		return listItem{obj: u}, nil
	}
	kept, settled := s.Settle(u)
	return listItem{obj: kept, settled: settled}, nil
}

// pendingItems are the raw items of one kind's LIST that arrived while
// the gate was closed.
type pendingItems struct {
	gvk  schema.GroupVersionKind
	raws [][]byte
}

// addItems adds the decoded items of a stack's LIST to live (the settled
// ones to live.Settled too) and returns its raw ones, still to settle.
func addItems(live *engine.Live, gvk schema.GroupVersionKind, items []listItem) pendingItems {
	pend := pendingItems{gvk: gvk}
	for _, it := range items {
		if it.obj == nil {
			pend.raws = append(pend.raws, it.raw)
			continue
		}
		k := engine.KeyOf(it.obj)
		live.Objects[k] = it.obj
		if it.settled {
			live.Settled[k] = true
		}
	}
	return pend
}

// settlePending waits for gate to open (or ctx to end), then decodes and
// settles the pending items on every processor, itemBatch at a time, and
// adds them to live under mu.
func settlePending(ctx context.Context, gate *settleGate, pending []pendingItems, live *engine.Live, mu *sync.Mutex) error {
	type job struct {
		gvk  schema.GroupVersionKind
		raws [][]byte
	}
	var jobs []job
	for _, p := range pending {
		for lo := 0; lo < len(p.raws); lo += itemBatch {
			jobs = append(jobs, job{p.gvk, p.raws[lo:min(lo+itemBatch, len(p.raws))]})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	select {
	case <-gate.opened:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	results := make([][]listItem, len(jobs))
	errs := make([]error, len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			d := newDecoder(true)
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				results[i], errs[i] = d.batch(jobs[i].raws, jobs[i].gvk, true, gate)
				clear(jobs[i].raws) // decoded: let the JSON go
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i, r := range results {
		if errs[i] != nil {
			return &decodeError{kind: jobs[i].gvk.Kind, err: errs[i]}
		}
		addItems(live, jobs[i].gvk, r)
	}
	return nil
}

// decodeError is an item of a kind's LIST that did not decode.
type decodeError struct {
	kind string
	err  error
}

func (e *decodeError) Error() string { return "decode " + e.kind + " list: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }
