package kubernetes

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

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
	if s != nil && trim {
		if u, ok := d.settleStream(raw, gvk, s); ok {
			return listItem{obj: u, settled: true}, nil
		}
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

// settleStream settles the raw list item raw through s as it reads it
// (engine.StreamSettle): its apiVersion, kind and metadata decoded as
// ownObject decodes them, its other fields compared with the desired
// object without building them. It returns the slim copy when the item
// settled; false when it did not, or cannot tell (then the item is to be
// decoded whole and given to s.Settle, which reports a malformed item).
func (d *decoder) settleStream(raw []byte, gvk schema.GroupVersionKind, s *engine.Settler) (*unstructured.Unstructured, bool) {
	r := &d.stream
	r.scanner.reset(raw)
	r.inPlace = true // the settled copy keeps no fieldsV1
	r.d = d
	if r.peek() != '{' {
		return nil, false
	}
	obj := map[string]any{}
	streaming := false
	ok := true
	early := d.early[:0]
	r.fields(d, func(key string) {
		switch {
		case streaming:
			ok = d.settle.Field(key, r)
		case key == "apiVersion" || key == "kind":
			obj[key] = r.value(d)
		case key == "metadata" && r.peek() == '{':
			u := &unstructured.Unstructured{Object: obj}
			r.settleMetadata(d, func(md map[string]any) map[string]any {
				obj[key] = md
				if u.GetKind() == "" {
					u.SetGroupVersionKind(gvk)
				}
				return s.DesiredMetadata(engine.KeyOf(u))
			})
			streaming = s.Stream(&d.settle, u)
			ok = streaming && d.replay(early)
		default:
			// A field before metadata (a custom resource's fields come
			// in name order): compared once metadata is read.
			early = append(early, earlyField{key, r.rawValue()})
		}
		if !ok {
			r.fail("not settled") // stop reading
		}
	})
	d.early = early
	if !ok || !streaming || r.err != nil {
		return nil, false
	}
	r.end()
	if r.err != nil {
		return nil, false
	}
	return d.settle.Done()
}

// earlyField is a field of an item met before its metadata, and its JSON.
type earlyField struct {
	name string
	raw  []byte
}

// replay gives the fields met before an item's metadata to the
// stream settle, and reports whether it may still settle.
func (d *decoder) replay(early []earlyField) bool {
	for _, f := range early {
		r := &d.early2
		r.scanner.reset(f.raw)
		r.inPlace = true
		r.d = d
		if !d.settle.Field(f.name, r) || r.err != nil {
			return false
		}
	}
	return true
}

// streamFields is the engine.FieldReader of an item's JSON.
type streamFields struct {
	scanner
	d *decoder
	// entered is set between Object and the first Next of an object,
	// members when that object is not empty.
	entered, members bool
}

// Object implements engine.FieldReader.
func (r *streamFields) Object() bool {
	if r.peek() != '{' {
		r.skip()
		return false
	}
	r.members = r.first('}')
	r.entered = true
	return true
}

// Next implements engine.FieldReader.
func (r *streamFields) Next() (string, bool) {
	if r.entered {
		r.entered = false
		if !r.members {
			return "", false
		}
	} else if r.err != nil || !r.more('}') {
		return "", false
	}
	start := r.i
	if r.peek() == '"' {
		if raw, plain := r.str(); plain && len(raw) > 0 && r.expect(':', "':' after a field name") {
			// The engine keeps a name no longer than the item's JSON:
			// a plain one is read in place.
			return unsafe.String(&raw[0], len(raw)), true
		}
		if r.err != nil {
			return "", false
		}
		r.i = start
	}
	return r.member(r.d)
}

// Skip implements engine.FieldReader.
func (r *streamFields) Skip() { r.skip() }

// Value implements engine.FieldReader.
func (r *streamFields) Value() any { return r.value(r.d) }

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
