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
	bw := bufio.NewWriter(w)
	stack := promEscape(r.Stack)
	counts := r.Counts()
	textsafe.Fprintf(bw, "# HELP gpuform_drift_objects Objects of the stack that differ from the configuration at the checked git ref, by drift class.\n# TYPE gpuform_drift_objects gauge\n")
	for _, c := range drift.Classes() {
		textsafe.Fprintf(bw, "gpuform_drift_objects{stack=\"%s\",class=\"%s\"} %d\n", stack, c, counts[c])
	}
	inSync := 0
	if r.InSync() {
		inSync = 1
	}
	textsafe.Fprintf(bw, "# HELP gpuform_drift_in_sync 1 when the cluster matches the configuration at the checked git ref, else 0.\n# TYPE gpuform_drift_in_sync gauge\n")
	textsafe.Fprintf(bw, "gpuform_drift_in_sync{stack=\"%s\"} %d\n", stack, inSync)
	textsafe.Fprintf(bw, "# HELP gpuform_drift_last_check_timestamp_seconds When gpuform drift last read the cluster, in seconds since the epoch.\n# TYPE gpuform_drift_last_check_timestamp_seconds gauge\n")
	textsafe.Fprintf(bw, "gpuform_drift_last_check_timestamp_seconds{stack=\"%s\"} %s\n", stack, strconv.FormatFloat(float64(r.CheckedAt.UnixMilli())/1000, 'f', -1, 64))
	return bw.Flush()
}

// promEscape escapes a label value for the Prometheus text format.
func promEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
