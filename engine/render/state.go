package render

import (
	"io"
	"text/tabwriter"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// StateRow is one object a stack owns by its inventory record.
type StateRow struct {
	Address string `json:"address"`
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	// Namespace is empty for a cluster-scoped object.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Commit is the stamp of the apply that last wrote it.
	Commit string `json:"commit,omitempty"`
}

// StateDoc is gpuform state list's JSON.
type StateDoc struct {
	Stack    string     `json:"stack"`
	Source   string     `json:"source"`
	Recorded bool       `json:"recorded"`
	Objects  []StateRow `json:"objects"`
}

// StateRowOf is the row of key k applied from address at commit.
func StateRowOf(address string, k engine.Key, commit string) StateRow {
	return StateRow{Address: address, Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Commit: commit}
}

// StateText writes what a stack owns: a line naming the stack and the
// cluster, then one line per object (address, kind and name).
func StateText(w io.Writer, doc StateDoc) error {
	if !doc.Recorded {
		_, err := textsafe.Fprintf(w, "Stack %s in cluster %s has no inventory record: gpuform has not applied it there.\n", doc.Stack, doc.Source)
		return err
	}
	textsafe.Fprintf(w, "Stack %s in cluster %s owns %d %s:\n\n", doc.Stack, doc.Source, len(doc.Objects), PluralWord(len(doc.Objects), "object", "objects"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range doc.Objects {
		k := engine.Key{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
		textsafe.Fprintf(tw, "%s\t%s\n", r.Address, k)
	}
	return tw.Flush()
}
