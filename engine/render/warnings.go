package render

import (
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
)

// writeWarnings writes each warning as validation diagnostics are written
// (config.DiagnosticWriter: "Warning: <message>", then "on <file> line <n>"
// and the source line when it has a position), each after a blank line.
func writeWarnings(w io.Writer, diags hcl.Diagnostics, opts TextOptions) {
	dw := &config.DiagnosticWriter{Files: opts.Files, Color: opts.Color}
	for _, d := range diags {
		var b strings.Builder
		_ = dw.Write(&b, hcl.Diagnostics{d})
		_, _ = io.WriteString(w, "\n"+strings.TrimSuffix(b.String(), "\n"))
	}
}
