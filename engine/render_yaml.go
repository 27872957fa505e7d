package engine

import (
	"bufio"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// RenderYAML writes the desired objects as multi-document YAML in apply
// order, as kubectl apply -f takes them. An object holding values from
// sensitive variables is replaced by a comment unless showSensitive is set.
func RenderYAML(w io.Writer, d *Desired, showSensitive bool) error {
	objs, err := d.Ordered()
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	bw := bufio.NewWriter(w)
	for i, o := range objs {
		if i > 0 {
			fmt.Fprintln(bw, "---")
		}
		fmt.Fprintf(bw, "# %s\n", o.Address)
		if o.Sensitive && !showSensitive {
			fmt.Fprintf(bw, "# %s: %s (holds values from sensitive variables; --show-sensitive prints it)\n", o.Key(), SensitiveValue)
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
