package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/internal/promtest"
)

// usageT0 is the start of the usage tests' history and window.
var usageT0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// usageSeries is one series of the history: its value at each minute from
// usageT0 (minutes before and after the window included, so that no series
// ends inside it: backfilled series have no staleness markers).
type usageSeries struct {
	metric, labels string
	value          func(min int) float64
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

// between is v from minute a (included) to b (excluded), else 0.
func between(a, b int, v float64) func(int) float64 {
	return func(m int) float64 {
		if m >= a && m < b {
			return v
		}
		return 0
	}
}

// usageHistory is a two-hour history of kube-state-metrics and the DCGM
// exporter for testdata/usage's tenants (see TestUsageAgainstPrometheus for
// what it adds up to).
func usageHistory() []usageSeries {
	return []usageSeries{
		{"kube_node_labels", `node="h100-1",label_gpuform_dev_node_group="h100"`, constant(1)},
		{"kube_node_labels", `node="h100-2",label_gpuform_dev_node_group="h100"`, constant(1)},
		{"kube_node_labels", `node="a100-1",label_gpuform_dev_node_group="a100"`, constant(1)},
		// risk: train-1, 2 GPUs on h100-1 for the whole window; infer-1, one
		// 3g.40gb slice on a100-1 for the first hour, then Succeeded.
		{"kube_pod_container_resource_requests", `namespace="risk",pod="train-1",container="main",node="h100-1",resource="nvidia_com_gpu",unit="integer"`, constant(2)},
		{"kube_pod_container_resource_requests", `namespace="risk",pod="train-1",container="main",node="h100-1",resource="cpu",unit="core"`, constant(8)},
		{"kube_pod_container_resource_requests", `namespace="risk",pod="infer-1",container="main",node="a100-1",resource="nvidia_com_mig_3g_40gb",unit="integer"`, constant(1)},
		// fraud: batch-1, 1 GPU on h100-2, Pending until minute 30, Running to 90.
		{"kube_pod_container_resource_requests", `namespace="fraud",pod="batch-1",container="main",node="h100-2",resource="nvidia_com_gpu",unit="integer"`, constant(1)},
		// default (no tenant): 1 GPU on h100-1 for the whole window.
		{"kube_pod_container_resource_requests", `namespace="default",pod="debug",container="main",node="h100-1",resource="nvidia_com_gpu",unit="integer"`, constant(1)},
		{"kube_pod_status_phase", `namespace="risk",pod="train-1",uid="u1",phase="Running"`, constant(1)},
		{"kube_pod_status_phase", `namespace="risk",pod="infer-1",uid="u2",phase="Running"`, between(-10, 60, 1)},
		{"kube_pod_status_phase", `namespace="risk",pod="infer-1",uid="u2",phase="Succeeded"`, between(60, 200, 1)},
		{"kube_pod_status_phase", `namespace="fraud",pod="batch-1",uid="u3",phase="Pending"`, between(-10, 30, 1)},
		{"kube_pod_status_phase", `namespace="fraud",pod="batch-1",uid="u3",phase="Running"`, between(30, 90, 1)},
		{"kube_pod_status_phase", `namespace="default",pod="debug",uid="u4",phase="Running"`, constant(1)},
		// DCGM: train-1's GPUs at 100% and 50%; batch-1's at 80% while it runs.
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="0",UUID="GPU-a",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-1",namespace="risk",pod="train-1",container="main"`, constant(100)},
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="1",UUID="GPU-b",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-1",namespace="risk",pod="train-1",container="main"`, constant(50)},
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="0",UUID="GPU-c",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-2",namespace="fraud",pod="batch-1",container="main"`, between(30, 90, 80)},
		{"DCGM_FI_DEV_GPU_UTIL", `gpu="2",UUID="GPU-d",device="nvidia2",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-1"`, constant(30)},
		// DCGM's profiling metric, per MIG instance (GPU_I_ID, GPU_I_PROFILE):
		// infer-1's 3g.40gb slice 70% busy while it runs; the GPU's other
		// instance, no pod's; and whole GPUs' engine activity, which the
		// report leaves to DCGM_FI_DEV_GPU_UTIL (not counted twice).
		{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", `gpu="0",UUID="GPU-e",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="a100-1",namespace="risk",pod="infer-1",container="main"`, between(-10, 60, 0.7)},
		{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", `gpu="0",UUID="GPU-e",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname="a100-1"`, constant(0)},
		{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", `gpu="0",UUID="GPU-a",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-1",namespace="risk",pod="train-1",container="main"`, constant(0.9)},
		// Quotas (gpuform's ResourceQuota gpuform-quota).
		{"kube_resourcequota", `namespace="risk",resourcequota="gpuform-quota",resource="requests.nvidia.com/gpu",type="hard"`, constant(4)},
		{"kube_resourcequota", `namespace="risk",resourcequota="gpuform-quota",resource="requests.nvidia.com/gpu",type="used"`, constant(2)},
		{"kube_resourcequota", `namespace="risk",resourcequota="gpuform-quota",resource="requests.nvidia.com/mig-3g.40gb",type="hard"`, constant(2)},
		{"kube_resourcequota", `namespace="risk",resourcequota="gpuform-quota",resource="requests.nvidia.com/mig-3g.40gb",type="used"`, between(-10, 60, 1)},
		{"kube_resourcequota", `namespace="fraud",resourcequota="gpuform-quota",resource="requests.nvidia.com/gpu",type="hard"`, constant(2)},
		{"kube_resourcequota", `namespace="fraud",resourcequota="gpuform-quota",resource="requests.nvidia.com/gpu",type="used"`, between(30, 90, 1)},
		{"kube_resourcequota", `namespace="search-prod",resourcequota="gpuform-quota",resource="requests.nvidia.com/mig-3g.40gb",type="hard"`, constant(2)},
		{"kube_resourcequota", `namespace="search-prod",resourcequota="gpuform-quota",resource="requests.nvidia.com/mig-3g.40gb",type="used"`, constant(0)},
	}
}

// openMetrics writes the history as OpenMetrics text, one sample a minute
// from 10 minutes before usageT0 to 10 minutes after the two hours.
func openMetrics(series []usageSeries) []byte {
	var b bytes.Buffer
	seen := map[string]bool{}
	for _, s := range series {
		if seen[s.metric] {
			continue
		}
		seen[s.metric] = true
		fmt.Fprintf(&b, "# TYPE %s gauge\n", s.metric)
		for _, t := range series {
			if t.metric != s.metric {
				continue
			}
			for m := -10; m <= 130; m++ {
				fmt.Fprintf(&b, "%s{%s} %g %d\n", t.metric, t.labels, t.value(m), usageT0.Add(time.Duration(m)*time.Minute).Unix())
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.Bytes()
}

// TestUsageAgainstPrometheus runs gpuform usage against a real Prometheus
// holding usageHistory and checks every figure against the hand-computed
// one. Each sample stands for one minute, 1/60 of an hour:
//
//	risk/h100:  allocated 2 GPUs × 2 h = 4; used (1 + 0.5) × 2 h = 3;
//	            quota 4 × 2 h = 8, idle (4 - 2) × 2 h = 4; cost 4 × 4 = 16.00
//	risk/a100:  allocated 1 slice × 3/7 × 1 h = 0.428571 (then Succeeded);
//	            used: the slice's engine active 0.7 × 3/7 × 1 h = 0.3 (70%);
//	            quota 2 × 3/7 × 2 h = 1.714286, idle (1 × 1 h + 2 × 1 h) × 3/7
//	            = 1.285714; cost 0.428571 × 2.8 = 1.20
//	fraud/h100: allocated 1 GPU × 1 h (Running minutes 30-89) = 1; used
//	            0.8 × 1 h = 0.8; quota 2 × 2 h = 4, idle 4 - 1 = 3; cost 4.00
//	search/a100: nothing allocated, quota = idle = 2 × 3/7 × 2 h = 1.714286
//	default (no tenant): 1 GPU × 2 h = 2 unattributed; the DCGM series
//	            without a pod is no one's.
func TestUsageAgainstPrometheus(t *testing.T) {
	srv := promtest.Start(t, t.TempDir(), openMetrics(usageHistory()), promtest.Options{})
	args := []string{"--chdir", "../../testdata/usage", "usage", "--prometheus", srv.URL,
		"--from", usageT0.Format(time.RFC3339), "--to", usageT0.Add(2 * time.Hour).Format(time.RFC3339), "--step", "1m"}
	res := runGpuform(t, nil, append(args, "--output", "json")...)
	if res.code != 0 {
		t.Fatalf("gpuform usage: exit %d\n%s", res.code, res.stderr)
	}
	var got struct {
		Currency string `json:"currency"`
		Rows     []struct {
			Tenant    string  `json:"tenant"`
			Pool      string  `json:"pool"`
			Allocated float64 `json:"allocated_gpu_hours"`
			Used      float64 `json:"used_gpu_hours"`
			Quota     float64 `json:"quota_gpu_hours"`
			Idle      float64 `json:"idle_quota_gpu_hours"`
			Cost      float64 `json:"cost"`
		} `json:"rows"`
		Unattributed float64 `json:"unattributed_allocated_gpu_hours"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	want := []struct {
		tenant, pool                       string
		allocated, used, quota, idle, cost float64
	}{
		{"fraud", "h100", 1, 0.8, 4, 3, 4},
		{"risk", "a100", 3.0 / 7, 0.3, 12.0 / 7, 9.0 / 7, 3.0 / 7 * 2.8},
		{"risk", "h100", 4, 3, 8, 4, 16},
		{"search", "a100", 0, 0, 12.0 / 7, 12.0 / 7, 0},
	}
	if got.Currency != "EUR" || len(got.Rows) != len(want) {
		t.Fatalf("currency %q, %d rows; want EUR and %d rows:\n%s", got.Currency, len(got.Rows), len(want), res.stdout)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, w := range want {
		g := got.Rows[i]
		if g.Tenant != w.tenant || g.Pool != w.pool || !near(g.Allocated, w.allocated) || !near(g.Used, w.used) ||
			!near(g.Quota, w.quota) || !near(g.Idle, w.idle) || !near(g.Cost, w.cost) {
			t.Errorf("row %d: got %+v\nwant %+v", i, g, w)
		}
	}
	if !near(got.Unattributed, 2) {
		t.Errorf("unattributed allocated GPU-hours: got %v, want 2", got.Unattributed)
	}
	// The CSV of the same figures, for finance (golden).
	res = runGpuform(t, nil, append(args, "--output", "csv")...)
	if res.code != 0 {
		t.Fatalf("gpuform usage --output csv: exit %d\n%s", res.code, res.stderr)
	}
	golden(t, "../../testdata/usage/expected.csv", res.stdout)
	res = runGpuform(t, nil, append(args, "--no-color")...)
	if res.code != 0 {
		t.Fatalf("gpuform usage: exit %d\n%s", res.code, res.stderr)
	}
	golden(t, "../../testdata/usage/expected.txt", res.stdout)
	// The HTML report, written with --out, for TestUsageHTMLScreenshot's
	// evidence.
	out := filepath.Join(t.TempDir(), "report.html")
	if res = runGpuform(t, nil, append(args, "--output", "html", "--out", out)...); res.code != 0 {
		t.Fatalf("gpuform usage --output html: exit %d\n%s", res.code, res.stderr)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "../../testdata/usage/report.html", string(html))
	if strings.Contains(string(html), "<script") || strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("the HTML report loads something from elsewhere; it must be self-contained")
	}
}

// TestUsageErrors: what gpuform usage says when it cannot report, before
// or after asking Prometheus (a port nothing listens on).
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no server", nil, "Error: --prometheus wants the server's http:// or https:// URL, e.g. http://prometheus.monitoring:9090\n"},
		{"bad output", []string{"--prometheus", "http://127.0.0.1:1", "--output", "pdf"}, "Error: --output \"pdf\": want one of text, csv, json, html\n"},
		{"two starts", []string{"--prometheus", "http://127.0.0.1:1", "--window", "1h", "--from", "2026-11-30T00:00:00Z"}, "Error: --from and --window both say where the window starts: give one\n"},
		{"unreachable", []string{"--prometheus", "http://127.0.0.1:1", "--window", "1h"}, "Error: querying Prometheus for kube_node_labels: Post \"http://127.0.0.1:1/api/v1/query_range\": dial tcp 127.0.0.1:1: connect: connection refused\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runGpuform(t, nil, append([]string{"--chdir", "../../testdata/usage", "usage"}, c.args...)...)
			if res.code != 1 || res.stderr != c.want || res.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", res.code, res.stdout, res.stderr, c.want)
			}
		})
	}
}
