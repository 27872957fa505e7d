package config

import (
	"reflect"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// valueFunc is the identity function limitExprs wraps around the values it
// measures. Its name is not an identifier, so a configuration cannot call
// it, nor so close to one that HCL would suggest it for a misspelt
// function; no diagnostic shows it: its argument's measure reports its own.
const valueFunc = "(measured value)"

// meter measures the values of one load against MaxValueSize and
// MaxEvalBytes (and strings against MaxFileSize), charging them to the
// load's budgets.
//
// A function argument must be measured before go-cty sees it: a function
// call walks every argument deeply (looking for marks) before the function
// runs, and HCL converts arguments to the parameters' types (unifying their
// element types) before that. So every parameter of a wrapped function is
// of a capsule type whose custom expression decoder (a hook HCL calls with
// the argument's expression) evaluates and measures the argument and hands
// go-cty only a capsule, which it does not walk.
type meter struct {
	spent *budgets
	// args are the capsule types of function arguments measured for each
	// use, operand the one of valueFunc's argument; each holds a
	// *cty.Value.
	args    map[use]cty.Type
	operand cty.Type
	// unmeasured is the capsule type of an argument passed on unmeasured
	// to a function that does not walk it (forIterFunc).
	unmeasured cty.Type
}

// newMeter returns the meter of one load, charging spent.
func newMeter(spent *budgets) *meter {
	m := &meter{spent: spent}
	m.args = map[use]cty.Type{}
	for _, u := range []use{argument, heavyArgument, textArgument, setArgument, setOperand} {
		ty := new(cty.Type)
		*ty = capsuleDecodedBy("measured argument", m.decoder(ty, u))
		m.args[u] = *ty
	}
	m.operand = capsuleDecodedBy("measured operand", m.decoder(&m.operand, compared))
	m.unmeasured = capsuleDecodedBy("value", func(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
		v, diags := expr.Value(ctx)
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		return cty.CapsuleVal(m.unmeasured, &v), diags
	})
	return m
}

// capsuleDecodedBy is a capsule type holding a *cty.Value that HCL, when
// it is a function's parameter type, asks decode for the argument.
func capsuleDecodedBy(name string, decode customdecode.CustomExpressionDecoderFunc) cty.Type {
	return cty.CapsuleWithOps(name, reflect.TypeFor[cty.Value](), &cty.CapsuleOps{
		ExtensionData: func(key any) any {
			if key == customdecode.CustomExpressionDecoder {
				return decode
			}
			return nil
		},
	})
}

// measure charges v, the value of the expression at rng, to the budgets
// for u and checks it against MaxValueSize and its strings against
// MaxFileSize. ok is false when v must not be used: with the diagnostic to
// report, or none when the budget was spent before (reported once, where
// it went over). known is whether v is wholly known.
func (m *meter) measure(v cty.Value, rng hcl.Range, u use) (known, ok bool, diag *hcl.Diagnostic) {
	if m.spent.bytes.Load() > MaxEvalBytes {
		return false, false, nil // spent: measuring would cost what the budget bounds
	}
	s := measureValue(v, MaxValueSize)
	charge := u.charge(s)
	if s.over {
		charge = MaxValueSize + 1 // the same wherever the walk stopped
	}
	total := m.spent.bytes.Add(charge)
	switch {
	case total > MaxEvalBytes && total-charge > MaxEvalBytes:
		return false, false, nil
	case total > MaxEvalBytes:
		return false, false, budgetSpent(rng)
	case s.over:
		return false, false, valueTooLarge(rng)
	case s.longest > MaxFileSize:
		return false, false, stringTooLong(rng, s.longest)
	}
	return s.known, true, nil
}

// decoder returns the custom expression decoder of the capsule type *ty,
// measuring for u: it evaluates the expression, measures its value and
// returns it in a capsule; NilVal when it must not be used, which HCL
// turns into an unknown argument.
func (m *meter) decoder(ty *cty.Type, u use) customdecode.CustomExpressionDecoderFunc {
	return func(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
		var v cty.Value
		var diags hcl.Diagnostics
		if t, ok := expr.(*hclsyntax.TemplateExpr); ok {
			v, diags = m.template(t, ctx)
		} else {
			v, diags = expr.Value(ctx)
		}
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		if _, ok, d := m.measure(v, expr.Range(), u); !ok {
			if d != nil {
				diags = append(diags, d)
			}
			return cty.NilVal, diags
		}
		return cty.CapsuleVal(*ty, &v), diags
	}
}

// template evaluates a string template part by part, adding up the
// lengths of the strings the parts make, and builds the string only when it
// fits in MaxFileSize; a for directive's strings are added up before they
// are joined. Parts that are all known, unmarked strings, numbers and bools
// are joined here; anything else (unknown, null, marked, of another type:
// what HCL reports or refines) by HCL's template over the parts' values.
func (m *meter) template(t *hclsyntax.TemplateExpr, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	vals := make([]cty.Value, len(t.Parts))
	strs := make([]string, len(t.Parts))
	total := int64(0)
	plain := true
	for i, p := range t.Parts {
		var d hcl.Diagnostics
		if j, ok := p.(*hclsyntax.TemplateJoinExpr); ok {
			vals[i], d = m.join(j, ctx)
		} else {
			vals[i], d = p.Value(ctx)
		}
		diags = append(diags, d...)
		s, n, ok := partString(vals[i], MaxFileSize-total)
		if total += n; total > MaxFileSize {
			return cty.NilVal, append(diags, templateTooLong(p.Range()))
		}
		strs[i], plain = s, plain && ok
	}
	if plain && !diags.HasErrors() {
		return cty.StringVal(strings.Join(strs, "")), diags
	}
	parts := make([]hclsyntax.Expression, len(t.Parts))
	for i, p := range t.Parts {
		parts[i] = &hclsyntax.LiteralValueExpr{Val: vals[i], SrcRange: p.Range()}
	}
	v, d := (&hclsyntax.TemplateExpr{Parts: parts, SrcRange: t.SrcRange}).Value(ctx)
	return v, append(diags, d...)
}

// partString is the string a template makes of v and its length, when v
// is a known, unmarked string, number or bool (ok); a number is written
// only when it has at most room digits (else n is over room). Otherwise n
// is the length of the string, an upper bound for a number, or 0 (HCL
// reports the value).
func partString(v cty.Value, room int64) (s string, n int64, ok bool) {
	uv, marks := v.Unmark()
	if !uv.IsKnown() || uv.IsNull() {
		return "", 0, false
	}
	switch uv.Type() {
	case cty.String:
		s = uv.AsString()
	case cty.Number:
		f := uv.AsBigFloat()
		if n := bigFloatDigits(f); n > room {
			return "", n, false
		}
		s = f.Text('f', -1)
	case cty.Bool:
		s = "false"
		if uv.True() {
			s = "true"
		}
	default:
		return "", 0, false
	}
	return s, int64(len(s)), len(marks) == 0
}

// join evaluates the for expression of a template for directive, checks
// that its strings fit in MaxFileSize together and joins them.
func (m *meter) join(j *hclsyntax.TemplateJoinExpr, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	tuple, diags := j.Tuple.Value(ctx)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	if _, ok, d := m.measure(tuple, j.Range(), stored); !ok {
		if d != nil {
			diags = append(diags, d)
		}
		return cty.DynamicVal, diags
	}
	if t, _ := tuple.Unmark(); t.IsKnown() && !t.IsNull() && t.CanIterateElements() {
		total := int64(0)
		for it := t.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if total += stringLength(e); total > MaxFileSize {
				return cty.DynamicVal, append(diags, templateTooLong(j.Range()))
			}
		}
	}
	lit := &hclsyntax.LiteralValueExpr{Val: tuple, SrcRange: j.Tuple.Range()}
	v, d := (&hclsyntax.TemplateJoinExpr{Tuple: lit}).Value(ctx)
	return v, append(diags, d...)
}

// stringLength is the length of the string a template makes of a known
// primitive value (an upper bound for a number), else 0: other values are
// an error of the template.
func stringLength(v cty.Value) int64 {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() {
		return 0
	}
	switch v.Type() {
	case cty.String:
		return int64(len(v.AsString()))
	case cty.Number:
		return numberDigits(v)
	case cty.Bool:
		return 5
	}
	return 0
}

// wrap returns f with every parameter measured (see meter): a parameter of
// f becomes one of argType (one of m.args) with the same name; the call converts each
// argument to f's parameter type (as HCL would have, but inferring the
// element type of a collection of any in linear time: see unifiedType) and
// calls f.
func (m *meter) wrap(f function.Function, argType cty.Type) function.Function {
	params := f.Params()
	measured := make([]function.Parameter, len(params))
	for i, p := range params {
		measured[i] = function.Parameter{Name: p.Name, Description: p.Description, Type: argType, AllowMarked: true}
	}
	var varParam *function.Parameter
	varType := cty.DynamicPseudoType
	if vp := f.VarParam(); vp != nil {
		varParam = &function.Parameter{Name: vp.Name, Description: vp.Description, Type: argType, AllowMarked: true}
		varType = vp.Type
	}
	// unwrap returns the arguments converted to f's parameters' types. (A
	// call with an unknown argument, one not measured, returns an unknown
	// value without calling Impl.)
	unwrap := func(args []cty.Value) ([]cty.Value, error) {
		out := make([]cty.Value, len(args))
		for i, a := range args {
			want := varType
			if i < len(params) {
				want = params[i].Type
			}
			v := *a.EncapsulatedValue().(*cty.Value)
			if want != cty.DynamicPseudoType { // else the conversion is v
				var err error
				if v, err = convertUnified(v, want); err != nil {
					return nil, function.NewArgError(i, err)
				}
			}
			out[i] = v
		}
		return out, nil
	}
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      measured,
		VarParam:    varParam,
		// f's call checks the arguments' types and works out the result's:
		// doing it here too would walk the arguments twice more.
		Type: function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			vals, err := unwrap(args)
			if err != nil {
				return cty.NilVal, err
			}
			return m.result(f.Call(vals))
		},
	})
}

// result measures a function's result, the values functions make: it
// passes on a call's error, refuses a result the measure refuses (see
// resultError) and turns one made after the budget was spent into an
// unknown value.
func (m *meter) result(v cty.Value, err error) (cty.Value, error) {
	if err != nil {
		return v, err
	}
	if _, ok, d := m.measure(v, hcl.Range{}, stored); !ok {
		if d == nil {
			return cty.DynamicVal, nil
		}
		return cty.NilVal, &resultError{summary: d.Summary, detail: d.Extra.(limitDetail)}
	}
	return v, nil
}

// wrapAll wraps every function of funcs (see wrap) and adds valueFunc.
func (m *meter) wrapAll(funcs map[string]function.Function) map[string]function.Function {
	for name, f := range funcs {
		funcs[name] = m.wrap(f, m.args[argumentUse(name)])
	}
	funcs[valueFunc] = function.New(&function.Spec{
		Description: "Returns its argument, measured.",
		Params:      []function.Parameter{{Name: "value", Type: m.operand, AllowMarked: true}},
		Type: func(args []cty.Value) (cty.Type, error) {
			if !args[0].IsKnown() {
				return cty.DynamicPseudoType, nil
			}
			return args[0].EncapsulatedValue().(*cty.Value).Type(), nil
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return *args[0].EncapsulatedValue().(*cty.Value), nil
		},
	})
	return funcs
}
