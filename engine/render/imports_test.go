package render_test

import (
	"testing"

	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// The renderers only read values and write to an io.Writer: no package of
// theirs may reach files, the network, processes or the cluster.
func TestRenderersDoNoIO(t *testing.T) {
	enginetest.NoImports(t, "renderers must not do I/O besides their io.Writer",
		"os", "os/exec", "net", "net/http", "syscall", "io/fs", "path/filepath",
		"github.com/gpuform/gpuform/providers", "k8s.io/client-go")
}
