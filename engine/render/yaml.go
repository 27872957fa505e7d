package render

import (
	"bufio"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// YAML writes the desired objects as multi-document YAML in apply
// order, as kubectl apply -f takes them. An object holding values from
// sensitive variables is replaced by a comment unless showSensitive is set.
func YAML(w io.Writer, d *engine.Desired, showSensitive bool) error {
	objs, err := d.Ordered()
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	bw := bufio.NewWriter(w)
	for i, o := range objs {
		if i > 0 {
			textsafe.Fprintln(bw, "---")
		}
		textsafe.Fprintf(bw, "# %s\n", o.Address)
		if o.Sensitive && !showSensitive {
			textsafe.Fprintf(bw, "# %s: %s (holds values from sensitive variables; --show-sensitive prints it)\n", o.Key(), engine.SensitiveValue)
			continue
		}
		b, err := yaml.Marshal(o.Object.Object)
		if err != nil {
			return fmt.Errorf("render %s: %w", o.Key(), err)
		}
		bw.Write(b)
	}
	return bw.Flush()
}
