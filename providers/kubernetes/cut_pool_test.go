package kubernetes

import (
	"bytes"
	"context"
	"reflect"
	"sync"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// The LISTs of a refresh read through one chunkPool decode to what each
// list read whole decodes to, whether their items settle as they arrive,
// decode whole, or wait raw for the gate and settle after (a chunk read
// into again while items in it wait would change them); and once items
// are decoded as they arrive, the responses are carried by chunks read
// into again, not a new chunk for every cutChunk bytes.
func TestChunksReusedAcrossLists(t *testing.T) {
	dir := t.TempDir()
	writeSizeS(t, dir)
	d := CompileDir(t, dir)
	lists := serverLists(t, d)
	settler := engine.NewSettler(d)
	open := func(s *engine.Settler) *settleGate { g := newSettleGate(); g.open(s); return g }

	tests := []struct {
		name string
		// gate returns the gate a round's LISTs are read through.
		gate func() *settleGate
		raw  bool
	}{
		{"settled as they arrive", func() *settleGate { return open(settler) }, false},
		{"decoded whole", func() *settleGate { return open(nil) }, false},
		{"raw until the gate opens", newSettleGate, true},
	}
	const rounds = 4 // the corpus read again through the same pool: several MB
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := &chunkPool{}
			read, total := 0, 0
			for range rounds {
				gate := tt.gate()
				var kept liveItems
				var pending []pendingItems
				for gvk, list := range lists {
					got, _, err := decodeItemsStream(iotest.HalfReader(bytes.NewReader(list)), gvk, true, gate, pool)
					if err != nil {
						t.Fatalf("%s: %v", gvk.Kind, err)
					}
					if p := kept.add(gvk, got); len(p.raws) > 0 {
						pending = append(pending, p)
					}
					read += len(list)
				}
				if tt.raw != (len(pending) > 0) {
					t.Fatalf("%d kinds' items waiting raw", len(pending))
				}
				gate.open(settler)
				if err := settlePending(context.Background(), gate, pending, &kept, &sync.Mutex{}); err != nil {
					t.Fatal(err)
				}
				live := &engine.Live{}
				kept.into(live)
				total += len(live.Objects)
				want := wholeLists(t, lists, settler, tt.name == "decoded whole")
				if len(live.Objects) != len(want) {
					t.Fatalf("%d objects, want %d", len(live.Objects), len(want))
				}
				for k, w := range want {
					if g := live.Objects[k]; !reflect.DeepEqual(g, w.obj) || live.Settled[k] != w.settled {
						t.Fatalf("%s: got settled=%v\n%#v\nwant settled=%v\n%#v", k, live.Settled[k], g, w.settled, w.obj)
					}
				}
			}
			if total == 0 {
				t.Fatal("no objects")
			}
			if chunks := read / cutChunk; !tt.raw && pool.made*2 > chunks {
				t.Errorf("%d chunks made for %d bytes read (%d chunks' worth): not reused", pool.made, read, chunks)
			}
		})
	}
}

// wholeItem is what a list read whole decodes an item to.
type wholeItem struct {
	obj     any
	settled bool
}

// wholeLists decodes each list whole, settling its items through s
// (none with whole).
func wholeLists(t *testing.T, lists map[schema.GroupVersionKind][]byte, s *engine.Settler, whole bool) map[engine.Key]wholeItem {
	t.Helper()
	gate := newSettleGate()
	if whole {
		s = nil
	}
	gate.open(s)
	out := map[engine.Key]wholeItem{}
	for gvk, list := range lists {
		items, _, err := decodeListFrom(newBytesCutter(list), gvk, true, gate)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			out[engine.KeyOf(it.obj)] = wholeItem{it.obj, it.settled}
		}
	}
	return out
}
