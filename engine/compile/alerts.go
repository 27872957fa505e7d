package compile

import (
	"maps"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/alerting"
)

// poolThresholds are the settings of a pool's alerts block.
func poolThresholds(a *config.PoolAlerts) alerting.Thresholds {
	return alerting.Thresholds{UtilizationBelow: a.UtilizationBelow, UtilizationFor: a.UtilizationFor,
		MemoryAbove: a.MemoryAbove, MemoryFor: a.MemoryFor, TemperatureAbove: a.TemperatureAbove, TemperatureFor: a.TemperatureFor,
		Disabled: a.Disabled, Labels: a.Labels}
}

// tenantThresholds are the settings of a tenant's alerts block.
func tenantThresholds(a *config.TenantAlerts) alerting.Thresholds {
	return alerting.Thresholds{UtilizationBelow: a.UtilizationBelow, UtilizationFor: a.UtilizationFor,
		MemoryAbove: a.MemoryAbove, MemoryFor: a.MemoryFor, TemperatureAbove: a.TemperatureAbove, TemperatureFor: a.TemperatureFor,
		QuotaAbove: a.QuotaAbove, QuotaFor: a.QuotaFor, PendingFor: a.PendingFor, Disabled: a.Disabled, Labels: a.Labels}
}

// alerts compiles the built-in alerts of each pool and tenant with an
// alerts block and every alert block into PrometheusRules, one per block,
// in the gpuform block's alerts_namespace.
func (c *compiler) alerts() {
	for _, p := range c.cfg.Pools {
		if p.Alerts != nil {
			rules := alerting.Rules(alerting.Scope{Stack: c.stack, Pool: p.Name}, poolThresholds(p.Alerts))
			c.prometheusRule(p.Address, poolRuleName(c.stack, p.Name), rules)
		}
	}
	for _, t := range c.cfg.Tenants {
		if t.Alerts != nil {
			scope := alerting.Scope{Stack: c.stack, Tenant: t.Name, Namespace: t.Namespace, ResourceQuota: engine.QuotaName}
			c.prometheusRule(t.Address, tenantRuleName(c.stack, t.Namespace), alerting.Rules(scope, tenantThresholds(t.Alerts)))
		}
	}
	for _, a := range c.cfg.Alerts {
		labels := map[string]string{"severity": a.Severity, "gpuform_stack": c.stack}
		maps.Copy(labels, a.Labels)
		r := alerting.Rule{Alert: a.Label, Expr: a.Expr, For: a.For, Labels: labels, Annotations: a.Annotations}
		c.prometheusRule(a.Address, alertRuleName(c.stack, a.Name), []alerting.Rule{r})
	}
}

// Names of the PrometheusRules: gpuform-<stack>-pool-<pool>,
// gpuform-<stack>-tenant-<tenant's namespace> (a DNS label, unlike a
// tenant's name) and gpuform-<stack>-alert-<alert> (the alert's name in
// lower case, '_' as '-').
func poolRuleName(stack, pool string) string { return "gpuform-" + stack + "-pool-" + pool }
func tenantRuleName(stack, namespace string) string {
	return "gpuform-" + stack + "-tenant-" + namespace
}
func alertRuleName(stack, alert string) string {
	return "gpuform-" + stack + "-alert-" + strings.ReplaceAll(strings.ToLower(alert), "_", "-")
}

// prometheusRule adds a PrometheusRule of one group, named as the object,
// holding rules. An empty group (every built-in alert disabled) still
// makes the object, so that the plan shows what the block asks.
func (c *compiler) prometheusRule(address, name string, rules []alerting.Rule) {
	pr := newObject(engine.KindPrometheusRule, c.cfg.Settings.AlertsNamespace, name, c.stack, address)
	meta := pr.Object["metadata"].(map[string]any)
	objLabels := meta["labels"].(map[string]any)
	for k, v := range c.cfg.Settings.AlertsLabels {
		if k != engine.LabelManagedBy && k != engine.LabelStack {
			objLabels[k] = v
		}
	}
	out := make([]any, 0, len(rules))
	for _, r := range rules {
		rule := map[string]any{"alert": r.Alert, "expr": r.Expr}
		if r.For != "" && r.For != "0s" && r.For != "0" {
			rule["for"] = r.For
		}
		if len(r.Labels) > 0 {
			rule["labels"] = engine.AnyMap(r.Labels)
		}
		if len(r.Annotations) > 0 {
			rule["annotations"] = engine.AnyMap(r.Annotations)
		}
		out = append(out, rule)
	}
	pr.Object["spec"] = map[string]any{"groups": []any{map[string]any{"name": name, "rules": out}}}
	// The alerts namespace is the monitoring stack's, which gpuform does
	// not manage, unless it is a tenant's.
	var deps []engine.Key
	for _, t := range c.cfg.Tenants {
		if t.Namespace == c.cfg.Settings.AlertsNamespace {
			deps = []engine.Key{engine.KeyFor(engine.KindNamespace, "", t.Namespace)}
		}
	}
	c.add(address, &engine.Object{Object: pr, DependsOn: deps})
}
