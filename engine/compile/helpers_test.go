package compile_test

import (
	"flag"

	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>, rewriting it under -update
// (go test ./engine/compile -update).
var golden = enginetest.GoldenFiles("testdata", update)
