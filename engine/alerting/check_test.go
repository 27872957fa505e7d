package alerting

import (
	"slices"
	"testing"
)

// Every built-in alert, for a pool and a tenant, is an alerting rule
// Prometheus accepts: its PromQL parses to an instant vector, its for is a
// duration, its labels are label names and its annotations templates; and
// disabled leaves out exactly what it names.
func TestBuiltinRulesAreValid(t *testing.T) {
	th := Thresholds{UtilizationBelow: 30, UtilizationFor: "15m", MemoryAbove: 90, MemoryFor: "5m", TemperatureAbove: 85,
		TemperatureFor: "5m", QuotaAbove: 92.5, QuotaFor: "15m", PendingFor: "10m", Labels: map[string]string{"team": "risk"}}
	for _, s := range []Scope{{Stack: "bank", Pool: "a100"}, {Stack: "bank", Tenant: "risk", Namespace: "risk-ns", ResourceQuota: "gpuform"}} {
		rules := Rules(s, th)
		want := PoolAlerts
		if s.Tenant != "" {
			want = TenantAlerts
		}
		if len(rules) != len(want) {
			t.Fatalf("%+v: %d rules; want %d", s, len(rules), len(want))
		}
		for _, r := range rules {
			if se := CheckExpr(r.Expr); se != nil {
				t.Errorf("%s: %s: %s", r.Alert, r.Expr, se.Msg)
			}
			if r.For != "0s" {
				if err := CheckDuration(r.For); err != nil {
					t.Errorf("%s: %v", r.Alert, err)
				}
			}
			for k := range r.Labels {
				if err := CheckLabelName(k); err != nil {
					t.Errorf("%s: %v", r.Alert, err)
				}
			}
			for _, text := range r.Annotations {
				if err := CheckTemplate(text); err != nil {
					t.Errorf("%s: %v", r.Alert, err)
				}
			}
			if r.Labels["team"] != "risk" || r.Labels["severity"] == "" {
				t.Errorf("%s: labels %v lack the block's team or a severity", r.Alert, r.Labels)
			}
		}
		th2 := th
		th2.Disabled = []string{XIDErrors, UtilizationLow}
		var names []string
		for _, r := range Rules(s, th2) {
			names = append(names, r.Alert)
		}
		if slices.Contains(names, "GPUXIDError") || slices.Contains(names, "GPUUtilizationLow") || len(names) != len(want)-2 {
			t.Errorf("with %v disabled: %v", th2.Disabled, names)
		}
	}
}

// CheckExpr reports the parser's position as byte offsets into the
// expression, and refuses a range vector (an alert needs an instant one).
func TestCheckExpr(t *testing.T) {
	for _, tc := range []struct {
		expr       string
		start, end int
		ok         bool
	}{
		{`DCGM_FI_DEV_GPU_UTIL < 30`, 0, 0, true},
		{`sum(rate(x[5m])`, 15, 15, false},
		{`x > > 3`, 4, 5, false},
		{`DCGM_FI_DEV_GPU_UTIL[5m]`, 0, 24, false},
		{`x{a="b"} by`, 9, 11, false},
	} {
		se := CheckExpr(tc.expr)
		if tc.ok {
			if se != nil {
				t.Errorf("%s: %v", tc.expr, se)
			}
			continue
		}
		if se == nil {
			t.Errorf("%s: accepted", tc.expr)
			continue
		}
		if se.Start != tc.start || se.End != tc.end {
			t.Errorf("%s: error at %d-%d (%s); want %d-%d", tc.expr, se.Start, se.End, se.Msg, tc.start, tc.end)
		}
	}
}
