package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/render"
)

// TestFleetDriftMetrics: a fleet's samples carry their cluster (escaped),
// an unchecked member has only gpuform_drift_check_succeeded 0, and a
// single cluster's metrics stay without the cluster label.
func TestFleetDriftMetrics(t *testing.T) {
	rep := &drift.Report{Stack: "s", CheckedAt: time.Unix(1700000000, 0)}
	tests := []struct {
		name    string
		write   func(*strings.Builder) error
		want    []string
		notWant []string
	}{
		{"single cluster", func(b *strings.Builder) error { return render.DriftMetrics(b, rep) },
			[]string{`gpuform_drift_in_sync{stack="s"} 1`, `gpuform_drift_objects{stack="s",class="missing"} 0`},
			[]string{"cluster=", "gpuform_drift_check_succeeded"}},
		{"fleet", func(b *strings.Builder) error {
			return render.FleetDriftMetrics(b, []render.FleetDrift{{Cluster: `we"st`, Report: rep}, {Cluster: "east"}})
		}, []string{
			`gpuform_drift_in_sync{stack="s",cluster="we\"st"} 1`,
			`gpuform_drift_objects{stack="s",cluster="we\"st",class="missing"} 0`,
			`gpuform_drift_last_check_timestamp_seconds{stack="s",cluster="we\"st"} 1700000000`,
			`gpuform_drift_check_succeeded{cluster="we\"st"} 1`,
			`gpuform_drift_check_succeeded{cluster="east"} 0`,
		}, []string{`cluster="east",`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w+"\n") {
					t.Errorf("metrics lack %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("metrics have %q:\n%s", w, b.String())
				}
			}
			if n := strings.Count(b.String(), "# TYPE gpuform_drift_in_sync gauge"); n != 1 {
				t.Errorf("%d TYPE lines for gpuform_drift_in_sync", n)
			}
		})
	}
}
