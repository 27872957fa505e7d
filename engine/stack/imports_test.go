package stack_test

import (
	"testing"

	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// The pipeline imports no provider and nothing of the command line: the
// caller opens the cluster and passes it in (dependencies point one way:
// cmd -> engine/*, providers -> engine).
func TestImportsNoProvider(t *testing.T) {
	enginetest.NoImports(t, "", "github.com/gpuform/gpuform/providers", "github.com/gpuform/gpuform/cmd", "k8s.io/client-go")
}
