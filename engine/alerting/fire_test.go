package alerting

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// The synthetic cluster of the fire tests: pool a100 is node-a (and
// node-b is in pool h100), tenant risk is namespace risk (and chatbot is
// another tenant). Series are in promqltest's load syntax, one sample a
// minute from time 0; the label sets are the DCGM exporter's and
// kube-state-metrics' (docs/observability.md).
const clusterSeries = `
load 1m
  kube_node_labels{node="node-a", label_gpuform_dev_pool="a100"} 1x60
  kube_node_labels{node="node-b", label_gpuform_dev_pool="h100"} 1x60
`

// dcgm is one DCGM exporter series of GPU gpu on host, held by a pod of
// namespace ns ("" when no pod holds it), with the values of a load line.
func dcgm(metric, host, gpu, ns, values string) string {
	l := metric + `{gpu="` + gpu + `", UUID="GPU-` + host + "-" + gpu + `", device="nvidia` + gpu + `", modelName="NVIDIA A100-SXM4-80GB", Hostname="` + host + `"`
	if ns != "" {
		l += `, namespace="` + ns + `", pod="` + ns + `-worker", container="main"`
	}
	return "  " + l + "} " + values + "\n"
}

// dcgmMIG is one DCGM exporter series of MIG instance gi (profile) of GPU
// gpu on host, as the exporter labels a GPU instance's series (GPU_I_ID,
// GPU_I_PROFILE beside the GPU's own labels), held by a pod of namespace ns
// ("" when none).
func dcgmMIG(metric, host, gpu, gi, profile, ns, values string) string {
	l := dcgm(metric, host, gpu, ns, values)
	return strings.Replace(l, `, Hostname=`, `, GPU_I_PROFILE="`+profile+`", GPU_I_ID="`+gi+`", Hostname=`, 1)
}

// TestBuiltinAlertsFire evaluates each built-in alert with Prometheus's
// own rule engine, once a minute over 40 minutes of synthetic series: it
// fires for the series that should trip it (and only once its "for" has
// passed) and stays silent for the healthy ones, for the other pool's
// nodes and for the other tenant's pods.
func TestBuiltinAlertsFire(t *testing.T) {
	pool := Scope{Stack: "bank", Pool: "a100"}
	tenant := Scope{Stack: "bank", Tenant: "risk", Namespace: "risk", ResourceQuota: "gpuform"}
	th := Thresholds{UtilizationBelow: 30, UtilizationFor: "15m", MemoryAbove: 90, MemoryFor: "5m",
		TemperatureAbove: 85, TemperatureFor: "5m", QuotaAbove: 90, QuotaFor: "15m", PendingFor: "10m"}
	for _, tc := range []struct {
		name   string
		scope  Scope
		alert  string
		series string
		// fire are the series (see identity) that fire, firstAt the
		// minute at which the first of them fires.
		fire    []string
		firstAt int
		// summary, when set, is the first firing alert's summary.
		summary string
	}{
		{"pool utilization low", pool, UtilizationLow,
			dcgm("DCGM_FI_DEV_GPU_UTIL", "node-a", "0", "", "10x40") + // idle: trips
				dcgm("DCGM_FI_DEV_GPU_UTIL", "node-a", "1", "", "80x40") + // busy
				dcgm("DCGM_FI_DEV_GPU_UTIL", "node-a", "2", "", "80x9 10x9 80x20") + // a 10-minute dip, shorter than 15m
				dcgm("DCGM_FI_DEV_GPU_UTIL", "node-b", "0", "", "5x40"), // idle, other pool
			[]string{"Hostname=node-a gpu=0"}, 15, "GPU 0 on node-a is less than 30% busy"},
		// MIG instances have no DCGM_FI_DEV_GPU_UTIL: their engine activity
		// (a ratio) is read instead, per GPU instance.
		{"pool utilization low, MIG instances", pool, UtilizationLow,
			dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "0", "1", "3g.40gb", "", "0.1x40") + // idle: trips
				dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "0", "2", "3g.40gb", "", "0.8x40") + // busy
				dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "1", "1", "1g.10gb", "", "0.8x9 0.1x9 0.8x20") + // a short dip
				dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-b", "0", "1", "3g.40gb", "", "0.05x40") + // idle, other pool
				// a whole GPU: read from DCGM_FI_DEV_GPU_UTIL (busy), not from
				// its engine activity
				dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "3", "", "0.05x40") +
				dcgm("DCGM_FI_DEV_GPU_UTIL", "node-a", "3", "", "80x40"),
			[]string{"GPU_I_ID=1 Hostname=node-a gpu=0"}, 15, "GPU 0 MIG instance 1 (3g.40gb) on node-a is less than 30% busy"},
		{"tenant utilization low, MIG instances", tenant, UtilizationLow,
			dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "0", "1", "3g.40gb", "risk", "0.2x40") +
				dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "0", "2", "3g.40gb", "risk", "0.9x40") +
				dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-a", "0", "3", "1g.10gb", "", "0x40") + // no pod's
				dcgmMIG("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "node-b", "0", "1", "3g.40gb", "chatbot", "0x40"),
			[]string{"GPU_I_ID=1 Hostname=node-a gpu=0 namespace=risk pod=risk-worker"}, 15, ""},
		{"tenant utilization low", tenant, UtilizationLow,
			dcgm("DCGM_FI_DEV_GPU_UTIL", "node-a", "0", "risk", "12x40") +
				dcgm("DCGM_FI_DEV_GPU_UTIL", "node-a", "1", "risk", "95x40") +
				dcgm("DCGM_FI_DEV_GPU_UTIL", "node-b", "0", "chatbot", "0x40"),
			[]string{"Hostname=node-a gpu=0 namespace=risk pod=risk-worker"}, 15, ""},
		{"pool memory high", pool, MemoryHigh,
			dcgm("DCGM_FI_DEV_FB_USED", "node-a", "0", "", "76000x40") + dcgm("DCGM_FI_DEV_FB_FREE", "node-a", "0", "", "4000x40") + // 95%
				dcgm("DCGM_FI_DEV_FB_USED", "node-a", "1", "", "40000x40") + dcgm("DCGM_FI_DEV_FB_FREE", "node-a", "1", "", "40000x40") + // 50%
				dcgm("DCGM_FI_DEV_FB_USED", "node-b", "0", "", "79000x40") + dcgm("DCGM_FI_DEV_FB_FREE", "node-b", "0", "", "1000x40"),
			[]string{"Hostname=node-a gpu=0"}, 5, ""},
		{"tenant memory high", tenant, MemoryHigh,
			dcgm("DCGM_FI_DEV_FB_USED", "node-a", "0", "risk", "78000x40") + dcgm("DCGM_FI_DEV_FB_FREE", "node-a", "0", "risk", "2000x40") +
				dcgm("DCGM_FI_DEV_FB_USED", "node-a", "1", "risk", "1000x40") + dcgm("DCGM_FI_DEV_FB_FREE", "node-a", "1", "risk", "79000x40") +
				dcgm("DCGM_FI_DEV_FB_USED", "node-b", "0", "chatbot", "79000x40") + dcgm("DCGM_FI_DEV_FB_FREE", "node-b", "0", "chatbot", "1000x40"),
			[]string{"Hostname=node-a gpu=0 namespace=risk pod=risk-worker"}, 5, ""},
		{"pool temperature high", pool, TemperatureHigh,
			dcgm("DCGM_FI_DEV_GPU_TEMP", "node-a", "0", "", "70x4 92x36") +
				dcgm("DCGM_FI_DEV_GPU_TEMP", "node-a", "1", "", "65x40") +
				dcgm("DCGM_FI_DEV_GPU_TEMP", "node-a", "2", "", "70x10 90x3 70x27") + // 3 minutes hot: shorter than 5m
				dcgm("DCGM_FI_DEV_GPU_TEMP", "node-b", "0", "", "95x40"),
			[]string{"Hostname=node-a gpu=0"}, 10, ""},
		{"tenant temperature high", tenant, TemperatureHigh,
			dcgm("DCGM_FI_DEV_GPU_TEMP", "node-a", "0", "risk", "91x40") +
				dcgm("DCGM_FI_DEV_GPU_TEMP", "node-a", "1", "risk", "60x40") +
				dcgm("DCGM_FI_DEV_GPU_TEMP", "node-b", "0", "chatbot", "99x40"),
			[]string{"Hostname=node-a gpu=0 namespace=risk pod=risk-worker"}, 5, ""},
		{"pool XID errors", pool, XIDErrors,
			dcgm("DCGM_FI_DEV_XID_ERRORS", "node-a", "0", "", "0x20 79x20") +
				dcgm("DCGM_FI_DEV_XID_ERRORS", "node-a", "1", "", "0x40") +
				dcgm("DCGM_FI_DEV_XID_ERRORS", "node-b", "0", "", "48x40"),
			[]string{"Hostname=node-a gpu=0"}, 21, ""},
		{"tenant XID errors", tenant, XIDErrors,
			dcgm("DCGM_FI_DEV_XID_ERRORS", "node-a", "0", "risk", "0x10 13x30") +
				dcgm("DCGM_FI_DEV_XID_ERRORS", "node-a", "1", "risk", "0x40") +
				dcgm("DCGM_FI_DEV_XID_ERRORS", "node-b", "0", "chatbot", "31x40"),
			[]string{"Hostname=node-a gpu=0 namespace=risk pod=risk-worker"}, 11, ""},
		{"tenant quota saturation", tenant, QuotaSaturation, `
  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.nvidia.com/mig-3g.40gb", type="hard"} 4x40
  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.nvidia.com/mig-3g.40gb", type="used"} 2x5 4x35
  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.nvidia.com/mig-1g.10gb", type="hard"} 2x40
  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.nvidia.com/mig-1g.10gb", type="used"} 1x40
  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.cpu", type="hard"} 64x40
  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.cpu", type="used"} 64x40
  kube_resourcequota{namespace="chatbot", resourcequota="gpuform", resource="requests.nvidia.com/gpu", type="hard"} 4x40
  kube_resourcequota{namespace="chatbot", resourcequota="gpuform", resource="requests.nvidia.com/gpu", type="used"} 4x40
`, []string{"namespace=risk resource=requests.nvidia.com/mig-3g.40gb"}, 21, ""},
		{"tenant slices pending", tenant, SlicesPending, `
  kube_pod_container_resource_requests{namespace="risk", pod="train-0", uid="u0", container="main", node="", resource="nvidia_com_mig_3g_40gb", unit="integer"} 1x40
  kube_pod_status_scheduled{namespace="risk", pod="train-0", uid="u0", condition="false"} 1x40
  kube_pod_status_scheduled{namespace="risk", pod="train-0", uid="u0", condition="true"} 0x40
  kube_pod_container_resource_requests{namespace="risk", pod="serve-0", uid="u1", container="main", node="node-a", resource="nvidia_com_mig_1g_10gb", unit="integer"} 1x40
  kube_pod_status_scheduled{namespace="risk", pod="serve-0", uid="u1", condition="false"} 1x3 0x37
  kube_pod_status_scheduled{namespace="risk", pod="serve-0", uid="u1", condition="true"} 0x3 1x37
  kube_pod_container_resource_requests{namespace="risk", pod="etl-0", uid="u2", container="main", node="", resource="cpu", unit="core"} 4x40
  kube_pod_status_scheduled{namespace="risk", pod="etl-0", uid="u2", condition="false"} 1x40
  kube_pod_container_resource_requests{namespace="chatbot", pod="llm-0", uid="u3", container="main", node="", resource="nvidia_com_gpu", unit="integer"} 2x40
  kube_pod_status_scheduled{namespace="chatbot", pod="llm-0", uid="u3", condition="false"} 1x40
`, []string{"namespace=risk pod=train-0"}, 10, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule := builtinRule(t, tc.scope, th, tc.alert)
			fired, first, summary := evaluate(t, rule, clusterSeries+strings.TrimPrefix(tc.series, "\n"), 40)
			if !slices.Equal(fired, tc.fire) {
				t.Errorf("%s fired for %q; want %q\nexpr: %s", rule.Alert, fired, tc.fire, rule.Expr)
			}
			if first != tc.firstAt {
				t.Errorf("%s first fired at minute %d; want %d (its for is %s)", rule.Alert, first, tc.firstAt, rule.For)
			}
			if tc.summary != "" && summary != tc.summary {
				t.Errorf("%s's summary: %q; want %q", rule.Alert, summary, tc.summary)
			}
		})
	}
}

// builtinRule is the built-in alert name of scope s.
func builtinRule(t *testing.T, s Scope, th Thresholds, name string) Rule {
	t.Helper()
	for _, r := range Rules(s, th) {
		if r.Alert == alertNames[name] {
			return r
		}
	}
	t.Fatalf("no built-in alert %s in %+v", name, s)
	return Rule{}
}

// alertNames maps the names of disabled to the alerts' names.
var alertNames = map[string]string{UtilizationLow: "GPUUtilizationLow", MemoryHigh: "GPUMemoryHigh", TemperatureHigh: "GPUTemperatureHigh",
	XIDErrors: "GPUXIDError", QuotaSaturation: "GPUQuotaSaturated", SlicesPending: "GPUPodsPending"}

// evaluate runs r with Prometheus's rule engine (the engine's defaults:
// 5-minute lookback) once a minute from 0 to minutes over series, and
// returns the identities of the alerts that fired, sorted, the minute the
// first fired (-1 when none did) and its summary annotation.
func evaluate(t *testing.T, r Rule, series string, minutes int) ([]string, int, string) {
	t.Helper()
	st := promqltest.LoadedStorage(t, series)
	t.Cleanup(func() { _ = st.Close() })
	engine := promqltest.NewTestEngineWithOpts(t, promql.EngineOpts{MaxSamples: 1_000_000, Timeout: 10 * time.Second, Parser: parser.NewParser(parser.Options{})})
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
	if err != nil {
		t.Fatalf("%s: %v", r.Expr, err)
	}
	hold, err := time.ParseDuration(r.For)
	if err != nil {
		t.Fatal(err)
	}
	ar := rules.NewAlertingRule(r.Alert, expr, hold, 0, labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, nil)
	fired := map[string]bool{}
	first, summary := -1, ""
	for m := 0; m <= minutes; m++ {
		ts := time.Unix(0, 0).Add(time.Duration(m) * time.Minute)
		if _, err := ar.Eval(context.Background(), 0, ts, rules.EngineQueryFunc(engine, st), nil, 0); err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
		for _, a := range ar.ActiveAlerts() {
			if a.State != rules.StateFiring {
				continue
			}
			if a.Labels.Get("severity") == "" || a.Labels.Get("gpuform_stack") == "" {
				t.Errorf("alert %s lacks its severity or gpuform_stack label", a.Labels)
			}
			fired[identity(a.Labels)] = true
			if first < 0 {
				first, summary = m, a.Annotations.Get("summary")
			}
		}
	}
	out := make([]string, 0, len(fired))
	for k := range fired {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, first, summary
}

// identity names the series an alert is about.
func identity(l labels.Labels) string {
	var parts []string
	for _, k := range []string{"GPU_I_ID", "Hostname", "gpu", "namespace", "pod", "resource"} {
		if v := l.Get(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
