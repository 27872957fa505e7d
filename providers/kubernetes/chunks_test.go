package kubernetes

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// corpusList is the JSON list of the corpus's items of kind gvk, repeated
// until there are more batches than a list's decoders hold at once
// (maxDecodeWorkers queued, as many decoding), so that the cutter waits for
// a batch to be decoded, and its chunks to be free, before reading on.
func corpusList(c *streamCorpus, gvk schema.GroupVersionKind) (string, [][]byte) {
	var one [][]byte
	for i, raw := range c.items {
		if c.gvks[i] == gvk {
			one = append(one, raw)
		}
	}
	var items [][]byte
	for len(items) <= (2*maxDecodeWorkers+2)*itemBatch {
		items = append(items, one...)
	}
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"7"},"items":[`)
	b.Write(bytes.Join(items, []byte(",")))
	b.WriteString("]}")
	return b.String(), items
}

// The chunks a response is read into are read into again once every item
// cut from them is decoded or settled, and what a refresh keeps is the same
// as from chunks never reused, whichever way an item went: settled as it
// streamed, decoded whole and settled (an edited item), or decoded without
// a Settler. Chunks of 8 KiB (several items each), poisoned when taken
// back, over generated size S's lists.
func TestChunksReusedOnceDecoded(t *testing.T) {
	c := newStreamCorpus(t)
	kinds := map[schema.GroupVersionKind]bool{}
	for _, gvk := range c.gvks {
		kinds[gvk] = true
	}
	edit := func(body string) string {
		// Every third item of a kind with a stack label changed: not settled.
		parts := strings.Split(body, `"gpuform.dev/stack":"`)
		for i := 1; i < len(parts); i += 3 {
			parts[i] = "x" + parts[i]
		}
		return strings.Join(parts, `"gpuform.dev/stack":"`)
	}
	for gvk := range kinds {
		body, items := corpusList(c, gvk)
		for _, tc := range []struct {
			name    string
			body    string
			settler *engine.Settler
		}{
			{"settled", body, c.settler},
			{"some changed", edit(body), c.settler},
			{"no settler", body, nil},
		} {
			want, _, err := decodeListFrom(newBytesCutter([]byte(tc.body)), gvk, true, openGate(tc.settler))
			if err != nil {
				t.Fatalf("%s %s: %v", gvk.Kind, tc.name, err)
			}
			cut := poisonedCutter(iotest.HalfReader(strings.NewReader(tc.body)))
			got, _, err := decodeListFrom(cut, gvk, true, openGate(tc.settler))
			if err != nil {
				t.Fatalf("%s %s: %v", gvk.Kind, tc.name, err)
			}
			if len(got) != len(items) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: %d items from reused chunks differ from the %d read whole", gvk.Kind, tc.name, len(got), len(want))
			}
			if cut.chunks.reused == 0 {
				t.Errorf("%s %s: no chunk reused", gvk.Kind, tc.name)
			}
		}
	}
}

// openGate is an open gate settling through s (nil: none).
func openGate(s *engine.Settler) *settleGate {
	g := newSettleGate()
	g.open(s)
	return g
}

// Items that wait raw behind a closed gate keep their chunks: each item's
// bytes are still its own once the whole response is read into chunks
// poisoned when taken back.
func TestChunksKeptByRawItems(t *testing.T) {
	c := newStreamCorpus(t)
	body, want := corpusList(c, c.gvks[0])
	cut := poisonedCutter(iotest.HalfReader(strings.NewReader(body)))
	items, _, err := decodeListFrom(cut, c.gvks[0], true, newSettleGate())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, it := range items {
		if it.obj != nil || !bytes.Equal(it.raw, want[i]) {
			t.Fatalf("item %d: %.80q, want %.80q raw", i, it.raw, want[i])
		}
	}
}
