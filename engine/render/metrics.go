package render

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// DriftMetrics writes the report as Prometheus text-format gauges for
// node-exporter's textfile collector: drifted objects by class, whether the
// stack is in sync, and when it was checked.
func DriftMetrics(w io.Writer, r *drift.Report) error {
	return driftMetrics(w, []FleetDrift{{Report: r}})
}

// FleetDrift is one member's drift check, for FleetDriftMetrics.
type FleetDrift struct {
	// Cluster is the member's name.
	Cluster string
	// Report is its drift; nil when the member could not be checked
	// (unreachable, failed).
	Report *drift.Report
}

// FleetDriftMetrics writes the members' drift as DriftMetrics does, every
// sample labelled with its member's cluster, and
// gpuform_drift_check_succeeded per cluster: 0 for a member that could not
// be checked (which has no other sample).
func FleetDriftMetrics(w io.Writer, members []FleetDrift) error {
	return driftMetrics(w, members)
}

// driftMetrics writes every member's gauges, each family once; a member
// with no cluster name (a single cluster) gets no cluster label.
func driftMetrics(w io.Writer, members []FleetDrift) error {
	bw := bufio.NewWriter(w)
	labels := func(m FleetDrift) string {
		l := `stack="` + promEscape(m.Report.Stack) + `"`
		if m.Cluster != "" {
			l += `,cluster="` + promEscape(m.Cluster) + `"`
		}
		return l
	}
	textsafe.Fprintf(bw, "# HELP gpuform_drift_objects Objects of the stack that differ from the configuration at the checked git ref, by drift class.\n# TYPE gpuform_drift_objects gauge\n")
	for _, m := range members {
		if m.Report == nil {
			continue
		}
		counts := m.Report.Counts()
		for _, c := range drift.Classes() {
			textsafe.Fprintf(bw, "gpuform_drift_objects{%s,class=\"%s\"} %d\n", labels(m), c, counts[c])
		}
	}
	textsafe.Fprintf(bw, "# HELP gpuform_drift_in_sync 1 when the cluster matches the configuration at the checked git ref, else 0.\n# TYPE gpuform_drift_in_sync gauge\n")
	for _, m := range members {
		if m.Report == nil {
			continue
		}
		inSync := 0
		if m.Report.InSync() {
			inSync = 1
		}
		textsafe.Fprintf(bw, "gpuform_drift_in_sync{%s} %d\n", labels(m), inSync)
	}
	textsafe.Fprintf(bw, "# HELP gpuform_drift_last_check_timestamp_seconds When gpuform drift last read the cluster, in seconds since the epoch.\n# TYPE gpuform_drift_last_check_timestamp_seconds gauge\n")
	for _, m := range members {
		if m.Report == nil {
			continue
		}
		textsafe.Fprintf(bw, "gpuform_drift_last_check_timestamp_seconds{%s} %s\n", labels(m), strconv.FormatFloat(float64(m.Report.CheckedAt.UnixMilli())/1000, 'f', -1, 64))
	}
	if len(members) > 1 || (len(members) == 1 && members[0].Cluster != "") {
		textsafe.Fprintf(bw, "# HELP gpuform_drift_check_succeeded 1 when gpuform drift could read the fleet member's cluster and check it, else 0.\n# TYPE gpuform_drift_check_succeeded gauge\n")
		for _, m := range members {
			ok := 0
			if m.Report != nil {
				ok = 1
			}
			textsafe.Fprintf(bw, "gpuform_drift_check_succeeded{cluster=\"%s\"} %d\n", promEscape(m.Cluster), ok)
		}
	}
	return bw.Flush()
}

// promEscape escapes a label value for the Prometheus text format.
func promEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
