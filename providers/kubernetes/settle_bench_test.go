package kubernetes

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// settleCorpus is generated size S compiled, and its objects' items as the
// API server lists them, each with its kind.
type settleCorpus struct {
	settler *engine.Settler
	items   [][]byte
	gvks    []schema.GroupVersionKind
}

func newSettleCorpus(tb testing.TB) *settleCorpus {
	tb.Helper()
	dir := tb.TempDir()
	writeSizeS(tb, dir)
	d := CompileDir(tb, dir)
	c := &settleCorpus{settler: engine.NewSettler(d)}
	for gvk, list := range serverLists(tb, d) {
		items, err := ListItems(list)
		if err != nil {
			tb.Fatal(err)
		}
		for _, raw := range items {
			c.items = append(c.items, raw)
			c.gvks = append(c.gvks, gvk)
		}
	}
	return c
}

// BenchmarkSettleItems decodes every item of an applied size S (1,066
// objects, as the API server lists them) and settles it, as a refresh
// does: every item settles.
func BenchmarkSettleItems(b *testing.B) {
	c := newSettleCorpus(b)
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d := newDecoder(true)
			for i, raw := range c.items {
				u, err := d.item(raw, c.gvks[i], true)
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := c.settler.Settle(u); !ok {
					b.Fatalf("item %d did not settle", i)
				}
			}
		}
	})
}
