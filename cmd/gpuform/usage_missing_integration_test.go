package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/internal/promtest"
)

// A Prometheus without the series gpuform usage reads makes usage fail
// (exit 1) naming every series and its exporter, instead of reporting
// zeros; one without an exporter's series is a warning naming them.
func TestUsageMissingSeries(t *testing.T) {
	var noDCGM []usageSeries
	for _, s := range usageHistory() {
		if !strings.HasPrefix(s.metric, "DCGM_") {
			noDCGM = append(noDCGM, s)
		}
	}
	for _, c := range []struct {
		name   string
		series []usageSeries
		code   int
		want   []string
	}{
		{"none", []usageSeries{{"up", `job="node"`, constant(1)}}, 1, []string{
			"Error: Prometheus has none of the series gpuform usage reads over the window, so every figure would be 0:\n",
			"  kube-state-metrics: kube_node_labels, kube_pod_container_resource_requests, kube_pod_status_phase, kube_resourcequota\n",
			"  the DCGM exporter (dcgm-exporter): DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE\n",
		}},
		{"no DCGM", noDCGM, 0, []string{
			"Warning: Prometheus has no series of the DCGM exporter (dcgm-exporter) over the window (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE)",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := promtest.Start(t, t.TempDir(), openMetrics(c.series), promtest.Options{})
			res := runGpuform(t, nil, "--chdir", "../../testdata/usage", "usage", "--prometheus", srv.URL,
				"--from", usageT0.Format(time.RFC3339), "--to", usageT0.Add(2*time.Hour).Format(time.RFC3339), "--step", "1m")
			if res.code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", res.code, c.code, res.stdout, res.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			if c.code != 0 && res.stdout != "" {
				t.Errorf("a failed report printed %q", res.stdout)
			}
		})
	}
}
