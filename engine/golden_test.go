package engine_test

import "flag"

// -update is accepted so that go test ./engine -update keeps working
// (docs/testing.md). This package has no golden files of its own: the
// engine's are under engine/compile, engine/render and engine/capacity,
// each rewritten by that package's -update.
var _ = flag.Bool("update", false, "rewrite golden files")
