package alerting

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// hostileNames are tenant and pool names (a tenant's for_each key can be
// any string) that Go's text/template would run or choke on.
var hostileNames = []string{
	`risk{{ query "up" }}`,
	`{{`,
	`a{{{b`,
	`x{`,
	`}}{{ $value }}`,
	`{{/* c */}}`,
	`{{- "trim" -}}`,
	`{{ template "x" }}`,
	`$labels {{.Labels}}`,
}

// TestBuiltinAlertNamesAreLiteral: Prometheus expands every alert label
// and annotation value as a Go template when an alert fires. A built-in
// alert whose tenant or pool has a hostile name, evaluated by Prometheus's
// own rule engine, fires with that name verbatim in its gpuform_tenant or
// gpuform_pool label (and a tenant's in its summary), runs no query but
// its own and expands without error. Before, the name was written raw: a
// key ran a query at alert time, and "{{" broke the expansion.
func TestBuiltinAlertNamesAreLiteral(t *testing.T) {
	th := Thresholds{QuotaAbove: 90, QuotaFor: "1m"}
	for _, name := range hostileNames {
		series := "load 1m\n" +
			`  kube_node_labels{node="node-a", label_gpuform_dev_pool=` + strconv.Quote(name) + "} 1x20\n" +
			`  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.nvidia.com/gpu", type="hard"} 4x20` + "\n" +
			`  kube_resourcequota{namespace="risk", resourcequota="gpuform", resource="requests.nvidia.com/gpu", type="used"} 4x20` + "\n" +
			dcgm("DCGM_FI_DEV_XID_ERRORS", "node-a", "0", "", "13x20")
		for _, c := range []struct {
			rule    Rule
			label   string
			summary string
		}{
			{builtinRule(t, Scope{Stack: "bank", Tenant: name, Namespace: "risk", ResourceQuota: "gpuform"}, th, QuotaSaturation), "gpuform_tenant", "Tenant " + name + " uses"},
			{builtinRule(t, Scope{Stack: "bank", Pool: name}, th, XIDErrors), "gpuform_pool", ""},
		} {
			a := fireOnce(t, c.rule, series)
			if a == nil {
				continue
			}
			if got := a.Labels.Get(c.label); got != name {
				t.Errorf("%q: label %s expanded to %q", name, c.label, got)
			}
			for _, v := range []string{a.Annotations.Get("summary"), a.Annotations.Get("description")} {
				if strings.Contains(v, "error expanding template") {
					t.Errorf("%q: an annotation did not expand: %s", name, v)
				}
			}
			if !strings.Contains(a.Annotations.Get("summary"), c.summary) {
				t.Errorf("%q: summary %q lacks %q", name, a.Annotations.Get("summary"), c.summary)
			}
		}
	}
}

// fireOnce evaluates r at minute 10 over series with Prometheus's rule
// engine and returns the one alert it fires (nil, after failing the test,
// when there is not exactly one, or when the expansion ran a query).
func fireOnce(t *testing.T, r Rule, series string) *rules.Alert {
	t.Helper()
	st := promqltest.LoadedStorage(t, series)
	t.Cleanup(func() { _ = st.Close() })
	eng := promqltest.NewTestEngineWithOpts(t, promql.EngineOpts{MaxSamples: 1_000_000, Timeout: 10 * time.Second, Parser: parser.NewParser(parser.Options{})})
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
	if err != nil {
		t.Fatalf("%s: %v", r.Expr, err)
	}
	queries := 0
	query := rules.EngineQueryFunc(eng, st)
	counting := func(ctx context.Context, q string, ts time.Time) (promql.Vector, error) {
		queries++
		return query(ctx, q, ts)
	}
	ar := rules.NewAlertingRule(r.Alert, expr, 0, 0, labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, slog.New(slog.DiscardHandler))
	if _, err := ar.Eval(context.Background(), 0, time.Unix(600, 0), counting, nil, 0); err != nil {
		t.Fatalf("%s: %v", r.Alert, err)
	}
	if queries != 1 {
		t.Errorf("%s: %d queries ran, want only the rule's own", r.Labels, queries)
	}
	active := ar.ActiveAlerts()
	if len(active) != 1 {
		t.Errorf("%s: %d alerts active, want 1", r.Labels, len(active))
		return nil
	}
	return active[0]
}
