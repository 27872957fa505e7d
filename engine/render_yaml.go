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
	bw := bufio.NewWriter(w)
	for i, o := range orderedObjects(d) {
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

// orderedObjects returns the desired objects in dependency order.
func orderedObjects(d *Desired) []*Object {
	changes := make([]*Change, len(d.Objects))
	byChange := make(map[*Change]*Object, len(d.Objects))
	for i, o := range d.Objects {
		changes[i] = &Change{Address: o.Address, Key: o.Key(), DependsOn: o.DependsOn}
		byChange[changes[i]] = o
	}
	out := make([]*Object, 0, len(changes))
	for _, c := range order(changes, nil) {
		out = append(out, byChange[c])
	}
	return out
}
