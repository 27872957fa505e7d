package config

import (
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// forIterFunc is the function limitExprs wraps around the collection of
// every for expression; it counts the elements iterated against
// MaxForIterations. Its name is what a diagnostic shows.
const forIterFunc = "for"

// limitExprsAt is limitExprs on the top-level blocks and attributes of
// body that hold one of the offsets (sorted) where scanSource found an
// expression limitExprs rewrites, so that a configuration without them
// (most generated ones: no templates, operators or for expressions) costs
// no walk and one with a few costs a walk of the blocks that hold them.
func limitExprsAt(body *hclsyntax.Body, hooks []int) {
	if len(hooks) == 0 {
		return
	}
	holds := func(r hcl.Range) bool {
		i := sort.SearchInts(hooks, r.Start.Byte)
		return i < len(hooks) && hooks[i] < r.End.Byte
	}
	for _, b := range body.Blocks {
		if holds(b.Range()) {
			limitExprs(b)
		}
	}
	for _, a := range body.Attributes {
		if holds(a.SrcRange) {
			limitExprs(a.Expr)
		}
	}
}

// limitExprs rewrites the expressions under node whose cost is not bounded
// by their input's size, or that walk values HCL hands them unmeasured:
//   - the collection of every for expression (and template for directive)
//     becomes a call of forIterFunc, which counts the elements against
//     MaxForIterations: nested for expressions multiply their sizes;
//   - the operands of == and != and the results of a conditional become
//     calls of valueFunc, which measures them (see meter.decode) before
//     the comparison or the unification of their types walks them;
//   - a string template with an interpolation or a directive becomes a
//     call of valueFunc on a copy of itself, which builds the string only
//     once it knows it fits in MaxFileSize (see meter.template).
//
// Function arguments need no rewrite: every function is wrapped (see
// meter.wrap).
func limitExprs(node hclsyntax.Node) {
	copies := map[*hclsyntax.TemplateExpr]bool{}
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch e := n.(type) {
		case *hclsyntax.ForExpr:
			if !isCall(e.CollExpr, forIterFunc) {
				e.CollExpr = callOf(forIterFunc, e.CollExpr)
			}
		case *hclsyntax.BinaryOpExpr:
			if e.Op == hclsyntax.OpEqual || e.Op == hclsyntax.OpNotEqual {
				e.LHS, e.RHS = measured(e.LHS), measured(e.RHS)
			}
		case *hclsyntax.ConditionalExpr:
			e.TrueResult, e.FalseResult = measured(e.TrueResult), measured(e.FalseResult)
		case *hclsyntax.TemplateExpr:
			if copies[e] || !interpolates(e) {
				return nil
			}
			c := &hclsyntax.TemplateExpr{Parts: e.Parts, SrcRange: e.SrcRange}
			copies[c] = true
			e.Parts = []hclsyntax.Expression{callOf(valueFunc, c)}
		}
		return nil
	})
}

// interpolates reports whether a template has a part that is not literal
// text (and that limitExprs has not rewritten yet): "${1e600000000}" is a
// literal number of 600 million digits as a string.
func interpolates(t *hclsyntax.TemplateExpr) bool {
	if len(t.Parts) == 1 && isCall(t.Parts[0], valueFunc) {
		return false
	}
	return slices.ContainsFunc(t.Parts, notText)
}

// notText reports whether a template part is anything but literal text.
func notText(p hclsyntax.Expression) bool {
	lit, ok := p.(*hclsyntax.LiteralValueExpr)
	return !ok || lit.Val.Type() != cty.String
}

// measured is expr as an argument of valueFunc, once.
func measured(expr hclsyntax.Expression) hclsyntax.Expression {
	if isCall(expr, valueFunc) {
		return expr
	}
	return callOf(valueFunc, expr)
}

// isCall reports whether expr is a call of the function name.
func isCall(expr hclsyntax.Expression, name string) bool {
	call, ok := expr.(*hclsyntax.FunctionCallExpr)
	return ok && call.Name == name
}

// callOf is a call of the function name on expr, with expr's range.
func callOf(name string, expr hclsyntax.Expression) *hclsyntax.FunctionCallExpr {
	rng := expr.Range()
	return &hclsyntax.FunctionCallExpr{
		Name:            name,
		Args:            []hclsyntax.Expression{expr},
		NameRange:       rng,
		OpenParenRange:  rng,
		CloseParenRange: rng,
	}
}

// forIterations returns forIterFunc for one load: the identity on its
// argument, counting the elements of every collection a for expression
// iterates into count and failing once they pass MaxForIterations. Its
// parameter is of the capsule type arg (see meter): a call of a function
// with an ordinary parameter walks the argument deeply, and a for
// expression's collection may hold the same value many times over; the
// for expression itself walks only its elements.
func forIterations(count *atomic.Int64, arg cty.Type) function.Function {
	return function.New(&function.Spec{
		Description: "Counts the elements for expressions iterate over.",
		Params:      []function.Parameter{{Name: "collection", Type: arg, AllowMarked: true}},
		Type:        function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			coll := *args[0].EncapsulatedValue().(*cty.Value)
			v, _ := coll.Unmark()
			if v.IsKnown() && !v.IsNull() && v.CanIterateElements() {
				if count.Add(int64(v.LengthInt())) > MaxForIterations {
					return cty.NilVal, fmt.Errorf("the for expressions of the configuration have iterated over more than %d elements in all (config.MaxForIterations); nested for expressions multiply their collections' sizes", MaxForIterations)
				}
			}
			return coll, nil
		},
	})
}
