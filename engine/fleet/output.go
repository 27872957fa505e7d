package fleet

import (
	"encoding/json"
	"io"

	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// Row is one member's line of a fleet summary.
type Row struct {
	Cluster string
	// Text says what the member's result is, or why it has none.
	Text string
}

// WriteHeading starts a member's section: `## Cluster NAME` in Markdown,
// `Cluster "NAME":` in text.
func WriteHeading(w io.Writer, cluster string, markdown bool) {
	if markdown {
		textsafe.Fprintf(w, "## Cluster %s\n\n", render.MarkdownCode(cluster))
		return
	}
	textsafe.Fprintf(w, "Cluster %q:\n\n", cluster)
}

// WriteSummary writes the fleet summary: a line title (text) or a heading
// and a table (Markdown, with column the second column's name), then one
// row per member, names and texts escaped.
func WriteSummary(w io.Writer, title, column string, rows []Row, markdown bool) {
	if markdown {
		textsafe.Fprintf(w, "\n## %s\n\n| Cluster | %s |\n| --- | --- |\n", render.MarkdownText(title), render.MarkdownText(column))
		for _, r := range rows {
			textsafe.Fprintf(w, "| %s | %s |\n", render.MarkdownCode(r.Cluster), render.MarkdownText(r.Text))
		}
		return
	}
	textsafe.Fprintf(w, "\n%s\n", title)
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Cluster))
	}
	for _, r := range rows {
		textsafe.Fprintf(w, "  %-*s  %s\n", width, r.Cluster, r.Text)
	}
}

// Doc is one member's entry of a fleet JSON document: its document as
// the single-cluster command prints it, or its error.
type Doc struct {
	Cluster string
	// JSON is the member's document; nil when Error is set.
	JSON  []byte
	Error string
}

// WriteJSON writes {"clusters": [{"cluster": NAME, key: DOCUMENT} or
// {"cluster": NAME, "error": WHY}, ...]} in fleet order.
func WriteJSON(w io.Writer, key string, docs []Doc) error {
	var out struct {
		Clusters []map[string]any `json:"clusters"`
	}
	out.Clusters = []map[string]any{}
	for _, d := range docs {
		m := map[string]any{"cluster": d.Cluster}
		if d.Error != "" {
			m["error"] = d.Error
		} else {
			m[key] = json.RawMessage(d.JSON)
		}
		out.Clusters = append(out.Clusters, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
