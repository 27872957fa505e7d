package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/usage"
)

// usageReport is a small hand-made report: two tenants, one with a pool
// "-" row, a name that needs escaping in HTML, and some unattributed use.
func usageReport() *usage.Report {
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	w, _ := usage.NewWindow(t0, t0.Add(4*time.Hour), time.Hour)
	rep := &usage.Report{Window: w, Currency: "EUR", UnattributedAllocated: 1.5, UnattributedUsed: 0.25,
		Rows: []usage.Row{
			{Tenant: "fraud", Namespace: "fraud", Pool: "h100", Allocated: 2, Used: 1.5, Quota: 8, Idle: 6, Price: 4, Cost: 8},
			{Tenant: "risk<b>", Namespace: "risk", Pool: "-", Allocated: 1},
			{Tenant: "risk<b>", Namespace: "risk", Pool: "a100", Allocated: 3.0 / 7, Quota: 12.0 / 7, Idle: 9.0 / 7, Price: 2.8, Cost: 1.2},
		},
		Tenants: []usage.Timeline{
			{Tenant: "fraud", Allocated: []float64{0, 1, 1, 0}, Used: []float64{0, 0.75, 0.75, 0}, Quota: []float64{2, 2, 2, 2}},
			{Tenant: "risk<b>", Allocated: []float64{1, 0.43, 0, 0}, Used: []float64{0, 0, 0, 0}, Quota: []float64{0.86, 0.86, 0.86, 0.86}},
		},
	}
	for k := range 4 {
		rep.Times = append(rep.Times, t0.Add(time.Duration(k)*time.Hour))
	}
	return rep
}

// TestUsageOutputs renders the report in every format against its golden
// file (testdata/usage/report.*).
func TestUsageOutputs(t *testing.T) {
	for _, format := range render.UsageFormats() {
		t.Run(format, func(t *testing.T) {
			write, err := render.UsageWriter(format)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := write(&b, usageReport()); err != nil {
				t.Fatal(err)
			}
			golden(t, "usage/report."+format, b.String())
			if format == "html" && (strings.Contains(b.String(), "risk<b>") || !strings.Contains(b.String(), "risk&lt;b&gt;")) {
				t.Error("the HTML report does not escape a name")
			}
		})
	}
	if _, err := render.UsageWriter("pdf"); err == nil || err.Error() != `--output "pdf": want one of text, csv, json, html` {
		t.Errorf("got %v", err)
	}
}
