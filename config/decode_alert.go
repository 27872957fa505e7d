package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// DefaultAlertsNamespace is where a stack's PrometheusRules go unless the
// gpuform block's alerts_namespace says otherwise.
const DefaultAlertsNamespace = "monitoring"

// Default thresholds and durations of the built-in alerts (see
// docs/observability.md).
const (
	DefaultUtilizationBelow = 30
	DefaultUtilizationFor   = "15m"
	DefaultMemoryAbove      = 90
	DefaultMemoryFor        = "5m"
	DefaultTemperatureAbove = 85
	DefaultTemperatureFor   = "5m"
	DefaultQuotaAbove       = 90
	DefaultQuotaFor         = "15m"
	DefaultPendingFor       = "10m"
	DefaultAlertSeverity    = "warning"
)

// decodeAlert decodes one alert block.
func (l *loader) decodeAlert(d *decoder, ok bool) {
	meta := d.meta
	a := &Alert{Meta: *meta}
	a.Expr = d.str("expr", "")
	a.For = d.str("for", "0s")
	a.Severity = d.str("severity", DefaultAlertSeverity)
	a.Labels = d.strMap("labels")
	a.Annotations = d.strMap("annotations")
	a.Meta = *meta
	if d.ok && ok {
		record(l.insts, l.insts.alerts, &l.insts.cfg.Alerts, a.Address, a)
	}
}

// decodePoolAlerts decodes a pool's alerts block: nil when there is none
// (the built-in alerts are off).
func (l *loader) decodePoolAlerts(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema) *PoolAlerts {
	var out *PoolAlerts
	l.decodeOneBlock(d, content, ctx, schema, "alerts", func(meta Meta, ad *decoder) {
		out = &PoolAlerts{Meta: meta}
		out.UtilizationBelow, out.UtilizationFor = ad.float("utilization_below", DefaultUtilizationBelow), ad.str("utilization_for", DefaultUtilizationFor)
		out.MemoryAbove, out.MemoryFor = ad.float("memory_above", DefaultMemoryAbove), ad.str("memory_for", DefaultMemoryFor)
		out.TemperatureAbove, out.TemperatureFor = ad.float("temperature_above", DefaultTemperatureAbove), ad.str("temperature_for", DefaultTemperatureFor)
		out.Disabled, out.Labels = ad.strList("disabled"), ad.strMap("labels")
	})
	return out
}

// decodeTenantAlerts decodes a tenant's alerts block: nil when there is
// none.
func (l *loader) decodeTenantAlerts(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema) *TenantAlerts {
	var out *TenantAlerts
	l.decodeOneBlock(d, content, ctx, schema, "alerts", func(meta Meta, ad *decoder) {
		out = &TenantAlerts{Meta: meta}
		out.UtilizationBelow, out.UtilizationFor = ad.float("utilization_below", DefaultUtilizationBelow), ad.str("utilization_for", DefaultUtilizationFor)
		out.MemoryAbove, out.MemoryFor = ad.float("memory_above", DefaultMemoryAbove), ad.str("memory_for", DefaultMemoryFor)
		out.TemperatureAbove, out.TemperatureFor = ad.float("temperature_above", DefaultTemperatureAbove), ad.str("temperature_for", DefaultTemperatureFor)
		out.QuotaAbove, out.QuotaFor = ad.float("quota_above", DefaultQuotaAbove), ad.str("quota_for", DefaultQuotaFor)
		out.PendingFor = ad.str("pending_for", DefaultPendingFor)
		out.Disabled, out.Labels = ad.strList("disabled"), ad.strMap("labels")
	})
	return out
}

// decodeOneBlock evaluates the one nested block typ of d's block and hands
// its values to set; a second block typ is an error.
func (l *loader) decodeOneBlock(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, typ string, set func(Meta, *decoder)) {
	bs := schemaBlock(schema, typ)
	seen := false
	for _, b := range content.Blocks {
		if b.Type != typ {
			continue
		}
		if seen {
			d.fail("Duplicate "+typ+" block", fmt.Sprintf("A %s takes at most one %s block.", d.meta.Type, typ), b.DefRange)
			continue
		}
		seen = true
		c, diags := b.Body.Content(l.bodySchema(bs))
		d.l.diags = append(d.l.diags, diags...)
		if diags.HasErrors() {
			d.ok = false
			continue
		}
		meta := Meta{Type: typ, Address: d.meta.Address + "." + typ, DeclRange: b.DefRange}
		vals, ok := d.l.attrValues(&meta, bs, c, ctx, "")
		bd := decoder{l: d.l, meta: &meta, vals: vals, ok: true}
		set(meta, &bd)
		if !ok || !bd.ok {
			d.ok = false
		}
		d.meta.setRange(l.insts, typ, b.DefRange)
	}
}
