package compile

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/alerting"
)

// alerts checks the alerting settings before any cluster call: the
// PrometheusRules' namespace and labels, each alerts block's thresholds,
// durations and disabled names, and each alert block's name, PromQL
// (Prometheus's own parser; an error points at the character inside the
// string), duration, labels and annotation templates.
func (v *validator) alerts() {
	s := v.cfg.Settings
	if s != nil {
		if s.AlertsNamespace != "" {
			v.name(s.Range("alerts_namespace"), "alerts_namespace", s.AlertsNamespace, validation.IsDNS1123Label)
		}
		for k, val := range s.AlertsLabels {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(val)...); len(errs) > 0 {
				v.errorf(s.KeyRange("alerts_labels", k), "Invalid label", "alerts_labels[%q] = %q is not a Kubernetes label: %s.", k, val, strings.Join(errs, "; "))
			}
		}
	}
	for _, p := range v.cfg.Pools {
		if p.Alerts != nil {
			v.alertSettings(&p.Alerts.Meta, poolThresholds(p.Alerts), alerting.PoolAlerts)
		}
	}
	for _, t := range v.cfg.Tenants {
		if t.Alerts != nil {
			v.alertSettings(&t.Alerts.Meta, tenantThresholds(t.Alerts), alerting.TenantAlerts)
		}
	}
	names := map[string]*config.Alert{}
	for _, a := range v.cfg.Alerts {
		v.alert(a)
		// Alert names that differ only in case or '_' and '-' would share
		// one PrometheusRule.
		n := alertRuleName("", a.Name)
		if prev, dup := names[n]; dup {
			v.errorf(a.DeclRange, "Duplicate PrometheusRule name", "%s and %s both become PrometheusRule gpuform-<stack>-alert-%s; rename one.", prev.Address, a.Address, strings.TrimPrefix(n, "gpuform--alert-"))
		}
		names[n] = a
	}
}

// alertSettings checks the settings s of the alerts block m, whose alerts
// are names.
func (v *validator) alertSettings(m *config.Meta, s alerting.Thresholds, names []string) {
	for _, pc := range []struct {
		attr string
		val  float64
	}{{"utilization_below", s.UtilizationBelow}, {"memory_above", s.MemoryAbove}, {"quota_above", s.QuotaAbove}} {
		if m.HasAttr(pc.attr) && (pc.val <= 0 || pc.val > 100) {
			v.errorf(m.Range(pc.attr), "Invalid alert threshold", "%s is a percentage: more than 0 and at most 100; got %s.", pc.attr, shown(m, pc.attr, pc.val))
		}
	}
	if s.TemperatureAbove <= 0 || s.TemperatureAbove > 150 {
		v.errorf(m.Range("temperature_above"), "Invalid alert threshold", "temperature_above is in degrees C: more than 0 and at most 150; got %s.", shown(m, "temperature_above", s.TemperatureAbove))
	}
	for _, d := range []struct{ attr, val string }{
		{"utilization_for", s.UtilizationFor}, {"memory_for", s.MemoryFor}, {"temperature_for", s.TemperatureFor},
		{"quota_for", s.QuotaFor}, {"pending_for", s.PendingFor},
	} {
		if m.HasAttr(d.attr) {
			if err := alerting.CheckDuration(d.val); err != nil {
				v.errorf(m.Range(d.attr), "Invalid duration", "%s: %s.", d.attr, err)
			}
		}
	}
	for _, d := range s.Disabled {
		if !slices.Contains(names, d) {
			v.errorf(m.Range("disabled"), "Unknown built-in alert", "disabled names %q; the built-in alerts here are %s.", d, strings.Join(names, ", "))
		}
	}
	v.ruleLabels(m, "labels", s.Labels)
}

// alert checks an alert block.
func (v *validator) alert(a *config.Alert) {
	if err := alerting.CheckAlertName(a.Label); err != nil {
		v.errorf(a.DeclRange, "Invalid alert name", "The alert block's name becomes the alert's name (label alertname): %s.", err)
	}
	if v.cfg.Settings != nil {
		v.name(a.DeclRange, "The PrometheusRule name", alertRuleName(v.cfg.Settings.Stack, a.Name), validation.IsDNS1123Subdomain)
	}
	if se := alerting.CheckExpr(a.Expr); se != nil {
		v.errorf(v.cfg.StringRange(a.Range("expr"), se.Start, se.End), "Invalid PromQL", "Prometheus's parser refuses the expression: %s.", se.Msg)
	}
	if err := alerting.CheckDuration(a.For); err != nil {
		v.errorf(a.Range("for"), "Invalid duration", "for: %s.", err)
	}
	if a.Severity == "" {
		v.errorf(a.Range("severity"), "Invalid severity", "severity becomes the alert's label severity and may not be empty; gpuform's own alerts use info, warning and critical.")
	}
	v.ruleLabels(&a.Meta, "labels", a.Labels)
	for k, text := range a.Annotations {
		if err := alerting.CheckLabelName(k); err != nil {
			v.errorf(a.KeyRange("annotations", k), "Invalid annotation name", "%s.", err)
		}
		if err := alerting.CheckTemplate(text); err != nil {
			v.errorf(a.KeyRange("annotations", k), "Invalid annotation template", "annotations[%q] is %s.", k, err)
		}
	}
}

// ruleLabels checks the labels an alert adds: Prometheus label names, and
// values that are templates as Prometheus expands them.
func (v *validator) ruleLabels(m *config.Meta, attr string, labels map[string]string) {
	for k, val := range labels {
		if err := alerting.CheckLabelName(k); err != nil {
			v.errorf(m.KeyRange(attr, k), "Invalid label name", "%s.", err)
		}
		if err := alerting.CheckTemplate(val); err != nil {
			v.errorf(m.KeyRange(attr, k), "Invalid label template", "%s[%q] is %s.", attr, k, err)
		}
	}
}
