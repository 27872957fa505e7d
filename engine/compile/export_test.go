package compile

import "github.com/gpuform/gpuform/engine"

// shareLeaves shares the leaf maps of objs as compile does, object by
// object.
func shareLeaves(objs []*engine.Object) {
	s := newSharer()
	for _, o := range objs {
		s.in(o.Object.Object)
	}
}

// ShareLeaves is shareLeaves, for the benchmarks of package compile_test.
var ShareLeaves = shareLeaves
