package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuform/gpuform/engine/usage"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// UsageCSVColumns are the columns of UsageCSV, in order; docs/usage.md
// documents each. They only ever grow at the end.
func UsageCSVColumns() []string {
	return []string{
		"from", "to", "tenant", "namespace", "pool",
		"allocated_gpu_hours", "used_gpu_hours", "utilization",
		"quota_gpu_hours", "idle_quota_gpu_hours",
		"price_per_gpu_hour", "currency", "cost",
	}
}

// hours formats GPU-hours with 3 decimals (3.6 GPU-seconds).
func hours(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// money formats an amount with 2 decimals.
func money(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// UsageCSV writes the report for finance: a header of UsageCSVColumns and
// one row per tenant and pool.
func UsageCSV(w io.Writer, rep *usage.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(UsageCSVColumns()); err != nil {
		return err
	}
	for _, r := range rep.Rows {
		rec := []string{
			stamp(rep.Window.From), stamp(rep.Window.To), r.Tenant, r.Namespace, r.Pool,
			hours(r.Allocated), hours(r.Used), strconv.FormatFloat(r.Utilization(), 'f', 3, 64),
			hours(r.Quota), hours(r.Idle),
			strconv.FormatFloat(r.Price, 'f', -1, 64), rep.Currency, money(r.Cost),
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// UsageText writes the report as a table with a total line.
func UsageText(w io.Writer, rep *usage.Report) error {
	textsafe.Fprintf(w, "GPU usage from %s to %s (step %s)\n\n", stamp(rep.Window.From), stamp(rep.Window.To), rep.Window.Step)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	textsafe.Fprintf(tw, "TENANT\tPOOL\tALLOCATED GPU-H\tUSED GPU-H\tUTIL\tQUOTA GPU-H\tIDLE QUOTA GPU-H\tCOST %s\n", rep.Currency)
	var tot usage.Row
	for _, r := range rep.Rows {
		textsafe.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Tenant, r.Pool, hours(r.Allocated), hours(r.Used), percent(r.Utilization()), hours(r.Quota), hours(r.Idle), money(r.Cost))
		tot.Allocated += r.Allocated
		tot.Used += r.Used
		tot.Quota += r.Quota
		tot.Idle += r.Idle
		tot.Cost += r.Cost
	}
	textsafe.Fprintf(tw, "total\t\t%s\t%s\t%s\t%s\t%s\t%s\n", hours(tot.Allocated), hours(tot.Used), percent(tot.Utilization()), hours(tot.Quota), hours(tot.Idle), money(tot.Cost))
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.UnattributedAllocated > 0 || rep.UnattributedUsed > 0 {
		textsafe.Fprintf(w, "\nNamespaces of no tenant: %s GPU-hours allocated, %s used (not in the table).\n", hours(rep.UnattributedAllocated), hours(rep.UnattributedUsed))
	}
	return nil
}

func percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 0, 64) + "%" }

// UsageJSONFormatVersion is the version of gpuform usage's JSON.
const UsageJSONFormatVersion = "1.0"

// UsageJSON writes the report as JSON: the window, the currency, the rows
// (the CSV's figures) and the unattributed totals.
func UsageJSON(w io.Writer, rep *usage.Report) error {
	type row struct {
		usage.Row
		Utilization float64 `json:"utilization"`
	}
	out := struct {
		FormatVersion         string  `json:"format_version"`
		From                  string  `json:"from"`
		To                    string  `json:"to"`
		StepSeconds           float64 `json:"step_seconds"`
		Currency              string  `json:"currency"`
		Rows                  []row   `json:"rows"`
		UnattributedAllocated float64 `json:"unattributed_allocated_gpu_hours"`
		UnattributedUsed      float64 `json:"unattributed_used_gpu_hours"`
	}{UsageJSONFormatVersion, stamp(rep.Window.From), stamp(rep.Window.To), rep.Window.Step.Seconds(), rep.Currency, []row{}, rep.UnattributedAllocated, rep.UnattributedUsed}
	for _, r := range rep.Rows {
		out.Rows = append(out.Rows, row{r, r.Utilization()})
	}
	return JSONValue(w, out)
}

// UsageFormats are the values of gpuform usage --output.
func UsageFormats() []string { return []string{"text", "csv", "json", "html"} }

// UsageWriter is the writer of format, one of UsageFormats.
func UsageWriter(format string) (func(io.Writer, *usage.Report) error, error) {
	switch format {
	case "text":
		return UsageText, nil
	case "csv":
		return UsageCSV, nil
	case "json":
		return UsageJSON, nil
	case "html":
		return UsageHTML, nil
	}
	return nil, fmt.Errorf("--output %q: want one of %s", format, strings.Join(UsageFormats(), ", "))
}

// UsageWarnings writes what the operator should know of a report that
// its figures do not say: the samples it left out (usage.Compute).
func UsageWarnings(w io.Writer, rep *usage.Report) {
	if rep.Dropped > 0 {
		textsafe.Fprintf(w, "Warning: Prometheus answered %d samples that were NaN, infinite, negative or above %g; the report leaves them out.\n", rep.Dropped, usage.MaxSampleValue)
	}
	if rep.NoInput() {
		return
	}
	for _, in := range rep.MissingExporters() {
		textsafe.Fprintf(w, "Warning: Prometheus has no series of %s over the window (%s); the figures made of them are 0. Check that Prometheus scrapes it (none is expected only if no pod ran on a GPU).\n", in.Exporter, strings.Join(in.Series, ", "))
	}
}

// UsageNoInput writes the error of a report none of whose series
// Prometheus has: which series, of which exporter.
func UsageNoInput(w io.Writer, rep *usage.Report) {
	textsafe.Fprintf(w, "Error: Prometheus has none of the series gpuform usage reads over the window, so every figure would be 0:\n")
	for _, in := range rep.MissingExporters() {
		textsafe.Fprintf(w, "  %s: %s\n", in.Exporter, strings.Join(in.Series, ", "))
	}
	textsafe.Fprintf(w, "Check that --prometheus is the server that scrapes these exporters, and the window (--window, --from, --to).\n")
}
