package kubernetes

import (
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// settleAll settles the stack's objects in live against s (engine.Settler),
// once every LIST is decoded and the desired objects exist: each one s
// finds unchanged is replaced by its slim copy and recorded in
// live.Settled. The objects are split into one contiguous run per
// processor; each Settle reads only its own object and s, which is safe
// for concurrent use.
func settleAll(live *engine.Live, s *engine.Settler) {
	keys := make([]engine.Key, 0, len(live.Objects))
	for k := range live.Objects {
		keys = append(keys, k)
	}
	kept := make([]settled, len(keys))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(keys)/settleRun))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(keys)/workers, (w+1)*len(keys)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				kept[i].obj, kept[i].ok = s.Settle(live.Objects[keys[i]])
			}
		})
	}
	wg.Wait()
	for i, k := range keys {
		if kept[i].ok {
			live.Objects[k] = kept[i].obj
			live.Settled[k] = true
		}
	}
}

// settleRun is the fewest objects worth a goroutine of settleAll.
const settleRun = 256

// settled is what Settle returned for one object.
type settled struct {
	obj *unstructured.Unstructured
	ok  bool
}
