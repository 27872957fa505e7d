package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// EnvVarPrefix is the prefix of environment variables that set input variables.
const EnvVarPrefix = "GPUFORM_VAR_"

// varDecl is a declared variable while its value is being resolved.
type varDecl struct {
	v           *Variable
	typ         cty.Type
	defaults    *typeexpr.Defaults
	def         cty.Value
	defRange    hcl.Range
	nullable    bool
	validations []*hcl.Block
}

// rawValue is a value given for a variable, before conversion.
type rawValue struct {
	value  cty.Value
	rng    *hcl.Range // where the value was written, when it was in a file
	source string
}

// loadVariables decodes the variable blocks and resolves each value from,
// lowest precedence first: default, GPUFORM_VAR_name, *.auto.vars.hcl and
// --var-file files in order, then --var arguments in order.
func (l *loader) loadVariables(varFiles []VarFile, opts Options) []*node {
	decls := map[string]*varDecl{}
	var order []string
	schema := l.idx[TypeVariable]
	for _, b := range l.variables {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variable name", Detail: fmt.Sprintf("%q is not a valid identifier.", name), Subject: b.LabelRanges[0].Ptr()})
			continue
		}
		if prev, ok := decls[name]; ok {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate variable", Detail: fmt.Sprintf("var.%s was already declared at %s.", name, prev.v.DeclRange), Subject: b.DefRange.Ptr()})
			continue
		}
		if d := l.decodeVariable(b, schema); d != nil {
			decls[name] = d
			order = append(order, name)
		}
	}

	given := map[string]rawValue{}
	// invalid names the variables given a value that does not parse; they
	// are not also reported as missing.
	invalid := map[string]bool{}
	for _, kv := range opts.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvVarPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, EnvVarPrefix)
		d, declared := decls[name]
		if !declared {
			continue
		}
		if val, ok := l.parseRaw(d, v, k); ok {
			given[name] = rawValue{value: val, source: "env " + k}
		} else {
			invalid[name] = true
		}
	}
	for _, f := range varFiles {
		l.readVarFile(f, decls, given)
	}
	for _, arg := range opts.Vars {
		name, v, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid --var option", Detail: fmt.Sprintf("The --var option takes name=value; %q has no \"=\".", arg)})
			continue
		}
		d, declared := decls[name]
		if !declared {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Value for undeclared variable", Detail: fmt.Sprintf("--var sets %q, but no variable of that name is declared.%s", name, suggestVariable(name, order))})
			continue
		}
		if val, ok := l.parseRaw(d, v, "--var "+name); ok {
			given[name] = rawValue{value: val, source: "--var"}
		} else {
			invalid[name] = true
		}
	}

	var nodes []*node
	for _, name := range order {
		d := decls[name]
		n := &node{addr: rootVar + "." + name, typ: rootVar, name: name, decl: d.v.DeclRange, state: 2}
		if _, ok := given[name]; !ok && invalid[name] {
			n.value = cty.DynamicVal
		} else {
			n.value = l.finalValue(d, given[name])
		}
		if n.value == cty.DynamicVal {
			n.bad = true
		}
		d.v.Value = n.value
		l.cfg.Variables = append(l.cfg.Variables, d.v)
		nodes = append(nodes, n)
	}
	return nodes
}

// suggestVariable proposes a declared variable close to a mistyped name, or
// says how to declare one.
func suggestVariable(name string, declared []string) string {
	best, bestDist := "", min(3, len(name)/2+1)
	for _, d := range declared {
		if dist := levenshtein(name, d); dist < bestDist {
			best, bestDist = d, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" Did you mean %s?", best)
	}
	return " Declare it with a variable block."
}

func (l *loader) decodeVariable(b *hcl.Block, schema *BlockSchema) *varDecl {
	content, diags := b.Body.Content(schema.hclSchema())
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	d := &varDecl{
		v:        &Variable{Meta: Meta{Type: TypeVariable, Label: b.Labels[0], Name: b.Labels[0], Address: rootVar + "." + b.Labels[0], DeclRange: b.DefRange}},
		typ:      cty.DynamicPseudoType,
		nullable: true,
	}
	ok := true
	for name, a := range content.Attributes {
		d.v.setRange(l.insts, name, a.Expr.Range())
		if vars := a.Expr.Variables(); len(vars) > 0 && name != "type" {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Variables not allowed", Detail: fmt.Sprintf("The %s of a variable must be a constant; it may not refer to %s.", name, vars[0].RootName()), Subject: vars[0].SourceRange().Ptr()})
			ok = false
		}
	}
	if !ok {
		return nil
	}
	if a, has := content.Attributes["type"]; has {
		ty, defaults, diags := typeexpr.TypeConstraintWithDefaults(a.Expr)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			return nil
		}
		d.typ, d.defaults = ty, defaults
	}
	constant := func(name string, want cty.Type) (cty.Value, bool) {
		a, has := content.Attributes[name]
		if !has {
			return cty.NilVal, false
		}
		v, diags := a.Expr.Value(&hcl.EvalContext{Functions: l.funcs})
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			ok = false
			return cty.NilVal, false
		}
		if want != cty.DynamicPseudoType {
			cv, err := convertUnified(v, want)
			if err != nil || cv.IsNull() {
				l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variable argument", Detail: fmt.Sprintf("The %s argument must be a %s.", name, want.FriendlyName()), Subject: a.Expr.Range().Ptr()})
				ok = false
				return cty.NilVal, false
			}
			v = cv
		}
		return v, true
	}
	if v, has := constant("description", cty.String); has {
		d.v.Description = v.AsString()
	}
	if v, has := constant("sensitive", cty.Bool); has {
		d.v.Sensitive = v.True()
	}
	if v, has := constant("nullable", cty.Bool); has {
		d.nullable = v.True()
	}
	if v, has := constant("default", cty.DynamicPseudoType); has {
		d.def = v
		d.defRange = content.Attributes["default"].Expr.Range()
	}
	for _, vb := range content.Blocks {
		if vb.Type == "validation" {
			d.validations = append(d.validations, vb)
		}
	}
	if !ok {
		return nil
	}
	return d
}

// parseRaw turns a string from the command line or environment into a value:
// literally for primitive types, as an HCL expression otherwise.
func (l *loader) parseRaw(d *varDecl, s, what string) (cty.Value, bool) {
	if d.typ.IsPrimitiveType() || d.typ == cty.DynamicPseudoType {
		return cty.StringVal(s), true
	}
	var expr hclsyntax.Expression
	var diags hcl.Diagnostics
	if d := CheckSource(what, []byte(s)); d != nil {
		diags = hcl.Diagnostics{d}
	} else {
		expr, diags = hclsyntax.ParseExpression([]byte(s), what, hcl.InitialPos)
		if !diags.HasErrors() {
			limitExprs(expr)
		}
	}
	if !diags.HasErrors() {
		var v cty.Value
		// No functions but the counter of for expressions' iterations and
		// the measure limitExprs inserts.
		v, diags = expr.Value(&hcl.EvalContext{Functions: map[string]function.Function{forIterFunc: l.funcs[forIterFunc], valueFunc: l.funcs[valueFunc]}})
		if !diags.HasErrors() {
			return v, true
		}
	}
	detail := fmt.Sprintf("The value given by %s for var.%s is not a valid expression of type %s.", what, d.v.Name, d.typ.FriendlyName())
	if d.v.Sensitive {
		detail += " (The value is sensitive and is not shown.)"
	} else if len(diags) > 0 {
		detail += " " + diags[0].Detail
	}
	l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for input variable", Detail: detail})
	return cty.NilVal, false
}

// readVarFile reads name = value lines from a variables file.
func (l *loader) readVarFile(f VarFile, decls map[string]*varDecl, given map[string]rawValue) {
	file, diags := hclsyntax.ParseConfig(f.Src, f.Name, hcl.InitialPos)
	l.diags = append(l.diags, diags...)
	if file == nil || diags.HasErrors() {
		return
	}
	if body, ok := file.Body.(*hclsyntax.Body); ok {
		limitExprsAt(body, l.hookOffsets[f.Name])
	}
	l.files[f.Name] = file
	attrs, diags := file.Body.JustAttributes()
	l.diags = append(l.diags, diags...)
	names := slices.Sorted(maps.Keys(attrs))
	for _, name := range names {
		a := attrs[name]
		if _, declared := decls[name]; !declared {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("The file sets %q, but no variable of that name is declared; the value is ignored.", name),
				Subject:  a.NameRange.Ptr(),
			})
			continue
		}
		v, diags := a.Expr.Value(&hcl.EvalContext{Functions: l.funcs})
		if d := decls[name]; d.v.Sensitive {
			diags = hideVarFileDiags(diags, d, a)
		}
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		rng := a.Expr.Range()
		given[name] = rawValue{value: v, rng: &rng, source: f.Name}
	}
}

// hideVarFileDiags rewords the diagnostics of evaluating a in a variables
// file, the value of sensitive variable d: the snippet of a's line and a
// function's error would show the value, so they point at the declaration
// and say only where the value was written.
func hideVarFileDiags(diags hcl.Diagnostics, d *varDecl, a *hcl.Attribute) hcl.Diagnostics {
	out := make(hcl.Diagnostics, len(diags))
	for i, diag := range diags {
		c := *diag
		c.Detail = fmt.Sprintf("The value of var.%s at %s:%d could not be evaluated; the detail is not shown because the variable is sensitive and it may quote the value.", d.v.Name, a.Range.Filename, a.Range.Start.Line)
		c.Subject, c.Context, c.Expression, c.EvalContext = d.v.DeclRange.Ptr(), nil, nil, nil
		out[i] = &c
	}
	return out
}

// finalValue converts, checks and validates the value of one variable,
// returning cty.DynamicVal when it is unusable.
func (l *loader) finalValue(d *varDecl, given rawValue) cty.Value {
	v, rng, source := given.value, given.rng, given.source
	if v == cty.NilVal {
		if d.def == cty.NilVal {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No value for required variable",
				Detail:   fmt.Sprintf("var.%s has no default, so it must be set with --var %s=..., a --var-file, a *.auto.vars.hcl file or %s%s.", d.v.Name, d.v.Name, EnvVarPrefix, d.v.Name),
				Subject:  d.v.DeclRange.Ptr(),
			})
			return cty.DynamicVal
		}
		v, rng, source = d.def, &d.defRange, "default"
	}
	d.v.Source = source
	subject := d.v.DeclRange.Ptr()
	if rng != nil && !d.v.Sensitive {
		// A sensitive value's own line (in a variables file, or its
		// default) would print the secret in the diagnostic's snippet:
		// those point at the declaration instead, and the detail names
		// the source.
		subject = rng
	}
	from := len(l.diags)
	measured := l.measured(v, *subject)
	nameBlock(l.diags[from:], rootVar+"."+d.v.Name)
	if !measured {
		return cty.DynamicVal
	}
	if d.defaults != nil {
		v = d.defaults.Apply(v)
	}
	cv, err := convertUnified(v, d.typ)
	if err != nil {
		detail := fmt.Sprintf("The value for var.%s (from %s) is not a %s", d.v.Name, source, d.typ.FriendlyName())
		if !d.v.Sensitive {
			detail += ": " + err.Error()
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for input variable", Detail: detail + ".", Subject: subject})
		return cty.DynamicVal
	}
	if cv.IsNull() && !d.nullable {
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for input variable", Detail: fmt.Sprintf("var.%s is not nullable, but its value is null.", d.v.Name), Subject: subject})
		return cty.DynamicVal
	}
	if !l.checkValidations(d, cv, subject) {
		return cty.DynamicVal
	}
	if d.v.Sensitive {
		cv = cv.Mark(sensitiveMark)
	}
	return cv
}

// checkValidations evaluates the variable's validation blocks against v.
func (l *loader) checkValidations(d *varDecl, v cty.Value, subject *hcl.Range) bool {
	schema := schemaBlock(l.idx[TypeVariable], "validation")
	ok := true
	for _, b := range d.validations {
		content, diags := b.Body.Content(schema.hclSchema())
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			ok = false
			continue
		}
		blockOK := true
		cond, msgAttr := content.Attributes["condition"], content.Attributes["error_message"]
		for _, t := range cond.Expr.Variables() {
			if !refersTo(t, rootVar, d.v.Name) {
				l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid validation condition", Detail: fmt.Sprintf("The condition of var.%s may refer only to var.%s.", d.v.Name, d.v.Name), Subject: t.SourceRange().Ptr()})
				blockOK = false
			}
		}
		if !blockOK {
			ok = false
			continue
		}
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{rootVar: cty.ObjectVal(map[string]cty.Value{d.v.Name: v})},
			Functions: l.funcs,
		}
		res, diags := cond.Expr.Value(ctx)
		if d.v.Sensitive {
			diags = hideSensitiveDetail(diags, rootVar+"."+d.v.Name)
		}
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			ok = false
			continue
		}
		res, err := convert.Convert(res, cty.Bool)
		if err != nil || res.IsNull() {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid validation condition", Detail: "The condition must be true or false.", Subject: cond.Expr.Range().Ptr()})
			ok = false
			continue
		}
		if res.True() {
			continue
		}
		msg := "The value is not valid."
		if m, diags := msgAttr.Expr.Value(&hcl.EvalContext{Functions: l.funcs}); !diags.HasErrors() && m.Type() == cty.String && !m.IsNull() {
			msg = m.AsString()
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   fmt.Sprintf("%s\n\nThis was checked by the validation rule at %s.", msg, cond.Expr.Range()),
			Subject:  subject,
		})
		ok = false
	}
	return ok
}

// hideSensitive hides the details of diags, the result of evaluating expr
// in ctx, when expr refers to a value derived from a sensitive variable:
// an error of a function or a conversion may quote that value.
func (l *loader) hideSensitive(diags hcl.Diagnostics, expr hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	if !l.marked || len(diags) == 0 {
		return diags
	}
	for _, t := range expr.Variables() {
		if v, d := t.TraverseAbs(ctx); !d.HasErrors() && v.ContainsMarked() {
			return hideSensitiveDetail(diags, t.RootName()+traversalSuffix(t))
		}
	}
	return diags
}

// traversalSuffix is the attribute path of t after its root, as in ".name".
func traversalSuffix(t hcl.Traversal) string {
	if len(t) > 1 {
		if a, ok := t[1].(hcl.TraverseAttr); ok {
			return "." + a.Name
		}
	}
	return ""
}

// hideSensitiveDetail rewords diagnostics of evaluating an expression over
// name, which holds a sensitive value: a function's error may quote its argument (the
// secret), so the detail says only what failed. An unknown function's
// detail names only the function and is kept.
func hideSensitiveDetail(diags hcl.Diagnostics, name string) hcl.Diagnostics {
	out := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		c := *d
		if c.Summary != "Call to unknown function" {
			c.Detail = fmt.Sprintf("Evaluating this expression over %s, which holds a sensitive value, failed; the detail is not shown because it may quote the value.", name)
		}
		c.Expression, c.EvalContext = nil, nil
		out[i] = &c
	}
	return out
}

// refersTo reports whether traversal t starts with root.name.
func refersTo(t hcl.Traversal, root, name string) bool {
	if t.RootName() != root || len(t) < 2 {
		return false
	}
	step, ok := t[1].(hcl.TraverseAttr)
	return ok && step.Name == name
}
