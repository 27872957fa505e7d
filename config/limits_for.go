package config

import (
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// forIterFunc is the function limitForExprs wraps around the collection of
// every for expression; it counts the elements iterated against
// MaxForIterations. Its name is what a diagnostic shows.
const forIterFunc = "for"

// limitForExprsAt is limitForExprs on the top-level blocks and attributes
// of body that hold one of the offsets of the keyword "for" that scanSource
// found (sorted), so that a configuration without for expressions costs no
// walk and one with a few costs a walk of the blocks that hold them.
func limitForExprsAt(body *hclsyntax.Body, fors []int) {
	if len(fors) == 0 {
		return
	}
	holds := func(r hcl.Range) bool {
		i := sort.SearchInts(fors, r.Start.Byte)
		return i < len(fors) && fors[i] < r.End.Byte
	}
	for _, b := range body.Blocks {
		if holds(b.Range()) {
			limitForExprs(b)
		}
	}
	for _, a := range body.Attributes {
		if holds(a.SrcRange) {
			limitForExprs(a.Expr)
		}
	}
}

// limitForExprs wraps the collection of every for expression (and template
// for directive) under node in a call of forIterFunc, so that nested for
// expressions cannot iterate without bound: a for expression is the one
// construct whose cost is not bounded by its input's size.
func limitForExprs(node hclsyntax.Node) {
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		fe, ok := n.(*hclsyntax.ForExpr)
		if !ok {
			return nil
		}
		if call, ok := fe.CollExpr.(*hclsyntax.FunctionCallExpr); ok && call.Name == forIterFunc {
			return nil
		}
		rng := fe.CollExpr.Range()
		fe.CollExpr = &hclsyntax.FunctionCallExpr{
			Name:            forIterFunc,
			Args:            []hclsyntax.Expression{fe.CollExpr},
			NameRange:       rng,
			OpenParenRange:  rng,
			CloseParenRange: rng,
		}
		return nil
	})
}

// forIterations returns forIterFunc for one load: the identity on its
// argument, counting the elements of every collection a for expression
// iterates into count and failing once they pass MaxForIterations.
func forIterations(count *atomic.Int64) function.Function {
	return function.New(&function.Spec{
		Description: "Counts the elements for expressions iterate over.",
		Params: []function.Parameter{{
			Name: "collection", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true,
		}},
		Type: func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, _ := args[0].Unmark()
			if v.IsKnown() && !v.IsNull() && v.CanIterateElements() {
				if count.Add(int64(v.LengthInt())) > MaxForIterations {
					return cty.NilVal, fmt.Errorf("the for expressions of the configuration have iterated over more than %d elements in all (config.MaxForIterations); nested for expressions multiply their collections' sizes", MaxForIterations)
				}
			}
			return args[0], nil
		},
	})
}
