package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// The most seconds a cool-down may last: the HorizontalPodAutoscaler's
// limit on stabilizationWindowSeconds, which KServe writes it into.
const maxCooldown = 3600

// decodeTaints decodes a pool's taint blocks; a key and effect twice is an
// error (a node holds one taint per key and effect).
func (l *loader) decodeTaints(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema) []*Taint {
	ts := schemaBlock(schema, "taint")
	var out []*Taint
	seen := map[[2]string]hcl.Range{}
	for _, b := range content.Blocks {
		if b.Type != "taint" {
			continue
		}
		c, diags := b.Body.Content(l.bodySchema(ts))
		d.l.diags = append(d.l.diags, diags...)
		if diags.HasErrors() {
			d.ok = false
			continue
		}
		t := &Taint{Meta: Meta{Type: "taint", Address: d.meta.Address + ".taint", DeclRange: b.DefRange}}
		vals, ok := d.l.attrValues(&t.Meta, ts, c, ctx, "")
		td := decoder{l: d.l, meta: &t.Meta, vals: vals, ok: true}
		t.Key = td.str("key", "")
		t.Value = td.str("value", "")
		t.Effect = td.enum("effect", EffectNoSchedule, EffectNoSchedule, EffectPreferNoSchedule, EffectNoExecute)
		if !ok || !td.ok {
			d.ok = false
			continue
		}
		id := [2]string{t.Key, t.Effect}
		if prev, dup := seen[id]; dup {
			d.fail("Duplicate taint", fmt.Sprintf("This pool already declares a taint %s with effect %s at %s; a node carries one taint per key and effect.", t.Key, t.Effect, prev), b.DefRange)
			continue
		}
		seen[id] = b.DefRange
		out = append(out, t)
	}
	if len(out) > 0 {
		d.meta.setRange(l.insts, "taint", out[0].DeclRange)
	}
	return out
}

// decodeAutoscaling decodes a model's autoscaling block: one metric (the
// GPU utilization, or a Prometheus query with its target) and a cool-down.
func (l *loader) decodeAutoscaling(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema) *Autoscaling {
	var out *Autoscaling
	l.decodeOneBlock(d, content, ctx, schema, "autoscaling", func(meta Meta, ad *decoder) {
		out = &Autoscaling{Meta: meta}
		ad.autoscaling(out)
	})
	return out
}

// autoscaling reads the autoscaling block's arguments into a and checks
// the cool-down against HPA's limit; engine/compile checks the metric.
func (d *decoder) autoscaling(a *Autoscaling) {
	a.GPUUtilization = d.int("gpu_utilization", 0)
	a.Query = d.str("query", "")
	a.Target = d.float("target", float64(a.GPUUtilization))
	a.Prometheus = d.str("prometheus", "")
	a.Cooldown = d.int("cooldown", 300)
	if a.Cooldown > maxCooldown {
		d.fail("Invalid cooldown", fmt.Sprintf("cooldown is %d seconds; the HorizontalPodAutoscaler that scales the model refuses a scale-down stabilization window over %d (one hour).", a.Cooldown, maxCooldown), a.Range("cooldown"))
	}
}

// strOrList reads an argument that takes one string or a list of them.
func (d *decoder) strOrList(name string) []string {
	v, ok := d.get(name)
	if !ok {
		return nil
	}
	if v.Type() == cty.String {
		return []string{v.AsString()}
	}
	if !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		d.fail("Incorrect attribute value type", fmt.Sprintf("Inappropriate value for attribute %q: a string or a list of strings is required.", name), d.meta.Range(name))
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() || ev.Type() != cty.String {
			d.fail("Incorrect attribute value type", fmt.Sprintf("Inappropriate value for attribute %q: a string or a list of strings is required.", name), d.meta.Range(name))
			return nil
		}
		out = append(out, ev.AsString())
	}
	if len(out) == 0 {
		d.fail("Empty runtime_class", fmt.Sprintf("%s lists no RuntimeClass; remove it to allow any runtime.", name), d.meta.Range(name))
	}
	return out
}
