package render_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>, rewriting it under -update
// (go test ./engine/render -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	enginetest.Golden(t, filepath.Join("testdata", name), got, *update)
}
