package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// decodeSettings decodes the gpuform and cluster blocks (fleet.go). They are evaluated
// before anything else and may use functions but no references.
func (l *loader) decodeSettings() {
	ctx := &hcl.EvalContext{Functions: l.funcs}
	if len(l.settings) == 0 {
		var subject *hcl.Range
		for name := range l.files {
			if subject == nil || name < subject.Filename {
				subject = &hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.InitialPos}
			}
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing gpuform block",
			Detail:   "Every configuration needs one gpuform block naming its stack, e.g.\n\n  gpuform {\n    stack = \"prod\"\n  }",
			Subject:  subject,
		})
	}
	if b := l.single(l.settings, TypeGpuform, "one"); b != nil {
		s := &Settings{Meta: Meta{Type: TypeGpuform, Address: TypeGpuform, DeclRange: b.DefRange}}
		d := l.decodeFixed(&s.Meta, b, ctx)
		s.Stack = d.str("stack", "")
		s.Scheduler = d.enum("scheduler", SchedulerNone, SchedulerNone, SchedulerKueue, SchedulerVolcano)
		s.MIGBackend = d.enum("mig_backend", BackendGPUOperator, BackendGPUOperator, BackendAgent)
		s.GPUOperatorNamespace = d.str("gpu_operator_namespace", "gpu-operator")
		s.PinDrivers = d.bool("pin_drivers", false)
		s.AlertsNamespace = d.str("alerts_namespace", DefaultAlertsNamespace)
		s.AlertsLabels = d.strMap("alerts_labels")
		s.Name = s.Stack
		l.cfg.Settings = s
	}
	if l.cfg.Settings == nil {
		l.cfg.Settings = &Settings{Scheduler: SchedulerNone, MIGBackend: BackendGPUOperator, GPUOperatorNamespace: "gpu-operator", AlertsNamespace: DefaultAlertsNamespace}
	}
	l.decodeClusters(ctx)
}

// single returns the first of blocks (nil when there is none) and reports
// every further one as a duplicate.
func (l *loader) single(blocks []*hcl.Block, typ, howMany string) *hcl.Block {
	for _, b := range blocks[min(1, len(blocks)):] {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Duplicate %s block", typ),
			Detail:   fmt.Sprintf("A configuration has %s %s block; the first is at %s.", howMany, typ, blocks[0].DefRange),
			Subject:  b.DefRange.Ptr(),
		})
	}
	if len(blocks) == 0 {
		return nil
	}
	return blocks[0]
}

// decodeFixed evaluates the arguments of a block that allows no references.
func (l *loader) decodeFixed(meta *Meta, b *hcl.Block, ctx *hcl.EvalContext) *decoder {
	schema := l.idx[b.Type]
	content, diags := b.Body.Content(schema.hclSchema())
	l.diags = append(l.diags, diags...)
	ok := !diags.HasErrors()
	for _, a := range content.Attributes {
		for _, t := range a.Expr.Variables() {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "References not allowed here",
				Detail:   fmt.Sprintf("The %s block is read before anything else, so its arguments may use functions but not references such as %s.", b.Type, t.RootName()),
				Subject:  t.SourceRange().Ptr(),
			})
			ok = false
		}
	}
	if !ok {
		return &decoder{l: l, meta: meta, ok: false}
	}
	vals, ok := l.attrValues(meta, schema, content, ctx, "")
	return &decoder{l: l, meta: meta, vals: vals, ok: ok}
}
