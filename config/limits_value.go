package config

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// valueStats is what measuring a value finds.
type valueStats struct {
	// size is the value's size as MaxValueSize counts it, up to the point
	// where the walk stopped.
	size int64
	// strings is the bytes of its strings (counted in size too).
	strings int64
	// depth is how deeply the value is nested: 1 for a number, 2 for a
	// list of numbers.
	depth int64
	// longest is the length in bytes of the longest string in the value.
	longest int
	// known is false when a part of the value is unknown.
	known bool
	// over is true when the size passed the limit; the walk stopped there.
	over bool
}

// measureValue measures v against limit: the bytes of its strings, keys and
// numbers' digits plus ElementSize for every element, number, bool and null,
// each part counted as often as v holds it. The walk stops once the size
// passes limit, so measuring costs at most limit/ElementSize steps however
// large v would be: a list that holds another twice, forty levels deep, is
// a few kilobytes in memory and 2^40 elements to measure.
func measureValue(v cty.Value, limit int64) valueStats {
	s := valueStats{known: true}
	s.add(v, limit, 1)
	return s
}

// add adds v, at depth, to s, stopping once s.size passes limit.
func (s *valueStats) add(v cty.Value, limit, depth int64) {
	if v.IsMarked() {
		v, _ = v.Unmark()
	}
	s.size += ElementSize
	s.depth = max(s.depth, depth)
	if s.size > limit {
		s.over = true
		return
	}
	if !v.IsKnown() {
		s.known = false
		return
	}
	if v.IsNull() {
		return
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		n := len(v.AsString())
		s.size += int64(n)
		s.strings += int64(n)
		s.longest = max(s.longest, n)
	case ty == cty.Number:
		s.size += numberDigits(v)
	case ty.IsObjectType():
		// The sum does not depend on the order of the attributes, and the
		// walk that stops early reports only that it did.
		for name := range ty.AttributeTypes() {
			s.size += int64(len(name))
			if s.add(v.GetAttr(name), limit, depth+1); s.over {
				return
			}
		}
	case ty.IsMapType():
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			s.size += int64(len(k.AsString()))
			if s.add(e, limit, depth+1); s.over {
				return
			}
		}
	case ty.IsCollectionType() || ty.IsTupleType():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if s.add(e, limit, depth+1); s.over {
				return
			}
		}
	}
	if s.size > limit {
		s.over = true
	}
}

// numberDigits is an upper bound of the characters of a known number
// written in decimal without an exponent, as converting it to a string
// writes it: 1e600000000 is a few bytes in memory and 600 MB as a string.
func numberDigits(v cty.Value) int64 {
	return bigFloatDigits(v.AsBigFloat())
}

// bigFloatDigits is numberDigits of f.
func bigFloatDigits(f *big.Float) int64 {
	if f.IsInf() {
		return 4
	}
	exp := int64(f.MantExp(nil))
	if exp < 0 {
		exp = -exp
	}
	// log10(2) digits for each bit of the exponent and of the mantissa,
	// plus the sign and the decimal point.
	return int64(math.Ceil(float64(exp+int64(f.MinPrec()))*math.Log10(2))) + 2
}

// use is what a measured value is for, which sets what its size counts
// against MaxEvalBytes: that is how the budget bounds the evaluation's
// time. The weights are go-cty's costs relative to the measure's own walk
// (measured on lists of 100,000 elements), rounded up.
type use int

const (
	// stored is a value stored or copied: a local, a block argument, a
	// template's result, a function's result. Its size counts once.
	stored use = iota
	// compared is an operand of == or !=, or a conditional's result:
	// comparing two values checks that their types are known at every
	// level, walking the value below again, so its size counts as many
	// times as it is deep.
	compared
	// argument is a function's argument: go-cty walks it again before the
	// call, and functions such as lookup, keys or concat up to 4 times the
	// measure. An argument counts at least as many times as it is deep
	// (see compared).
	argument
	// heavyArgument is an argument of a function that walks it several
	// times or builds as much again: jsonencode, flatten, distinct, sort,
	// contains and the like, up to 16 times the measure.
	heavyArgument
	// textArgument is an argument of a function that works on strings
	// character by character (length, regex, replace, upper...), at up
	// to 64 times the measure per byte.
	textArgument
	// setArgument is the argument of toset: go-cty hashes every element,
	// at up to 128 times the measure.
	setArgument
	// setOperand is an argument of setunion, setintersection or
	// setsubtract, which hash and sort every element again, at up to 512
	// times the measure.
	setOperand
)

// weight is how many times the size of a value counts for u: the size but
// the strings' bytes, and the strings' bytes.
func (u use) weight() (elements, strs int64) {
	switch u {
	case argument:
		return 4, 4
	case heavyArgument:
		return 16, 16
	case textArgument:
		return 4, 64
	case setArgument:
		return 128, 128
	case setOperand:
		return 512, 512
	}
	return 1, 1
}

// charge is what a value of stats s counts against MaxEvalBytes for u.
func (u use) charge(s valueStats) int64 {
	elements, strs := u.weight()
	if u != stored {
		elements = max(elements, s.depth)
	}
	return (s.size-s.strings)*elements + s.strings*strs
}

// argumentUse is how a function's arguments count (see use), by name.
func argumentUse(name string) use {
	switch name {
	case "jsonencode", "flatten", "distinct", "sort", "compact", "contains", "index", "coalescelist",
		"tolist", "tomap", "chunklist", "setproduct", "zipmap", "reverse", "formatlist":
		return heavyArgument
	case "length", "chomp", "format", "indent", "join", "lower", "regex", "regexall", "replace",
		"split", "strrev", "substr", "title", "trim", "trimprefix", "trimspace", "trimsuffix", "upper",
		"jsondecode", "csvdecode", "parseint", "tonumber", "formatdate", "timeadd":
		return textArgument
	case "toset":
		return setArgument
	case "setunion", "setintersection", "setsubtract":
		return setOperand
	}
	return argument
}

// spentBudget reports whether the evaluation has spent MaxEvalBytes: what
// is left to evaluate is not (each measure would fail, silently, since the
// diagnostic is where the budget went over).
func (l *loader) spentBudget() bool {
	return l.spent.bytes.Load() > MaxEvalBytes
}

// literal reports whether expr is written out in full, with no reference,
// function call, operator but - and ! or for expression: its value is no
// larger than its source, so a local value made of one is not measured
// (it is evaluated once; a block argument is evaluated once per instance,
// and is).
func literal(expr hcl.Expression) bool {
	switch e := expr.(type) {
	case *hclsyntax.LiteralValueExpr:
		return true
	case *hclsyntax.TemplateExpr:
		return !slices.ContainsFunc(e.Parts, notText)
	case *hclsyntax.TupleConsExpr:
		return !slices.ContainsFunc(e.Exprs, func(x hclsyntax.Expression) bool { return !literal(x) })
	case *hclsyntax.ObjectConsExpr:
		return !slices.ContainsFunc(e.Items, func(item hclsyntax.ObjectConsItem) bool {
			return !literal(item.KeyExpr) || !literal(item.ValueExpr)
		})
	case *hclsyntax.ObjectConsKeyExpr:
		// A bare name is the key itself (as HCL's ObjectConsKeyExpr reads
		// it), not a reference.
		if t, ok := e.Wrapped.(*hclsyntax.ScopeTraversalExpr); ok && !e.ForceNonLiteral && len(t.Traversal) == 1 {
			return true
		}
		return literal(e.Wrapped)
	case *hclsyntax.ParenthesesExpr:
		return literal(e.Expression)
	case *hclsyntax.UnaryOpExpr:
		return literal(e.Val)
	}
	return false
}

// measured measures v, the value of the expression at rng (see
// meter.measure), reporting why it is refused; false when it is.
func (l *loader) measured(v cty.Value, rng hcl.Range) bool {
	_, ok, d := l.meter.measure(v, rng, stored)
	if d != nil {
		l.diags = append(l.diags, d)
	}
	return ok
}

// limitDetail is the Extra of a diagnostic of the evaluation's limits: its
// detail, given where the value is: "" until evalNode knows the block, then
// " in local.x".
type limitDetail func(where string) string

// limitDiagnostic is an error at rng whose detail names where it is.
func limitDiagnostic(summary string, rng hcl.Range, detail limitDetail) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   detail(""),
		Subject:  rng.Ptr(),
		Extra:    detail,
	}
}

// resultError is the error of a function call whose result the measure
// refuses; nameBlock turns HCL's "Error in function call" about it into the
// limit's diagnostic.
type resultError struct {
	summary string
	detail  limitDetail
}

func (e *resultError) Error() string { return e.detail("") }

// nameBlock completes the details of the limits' diagnostics in diags with
// the block being evaluated, addr ("" for none).
func nameBlock(diags hcl.Diagnostics, addr string) {
	where := ""
	if addr != "" {
		where = " in " + addr
	}
	for _, d := range diags {
		if call, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d); ok {
			var re *resultError
			if errors.As(call.FunctionCallError(), &re) {
				d.Summary, d.Extra = re.summary, re.detail
			}
		}
		if f, ok := d.Extra.(limitDetail); ok {
			d.Detail = f(where)
			d.Extra = nil
		}
	}
}

// valueTooLarge is the diagnostic of a value over MaxValueSize at rng.
func valueTooLarge(rng hcl.Range) *hcl.Diagnostic {
	return limitDiagnostic("Value too large", rng, func(where string) string {
		return fmt.Sprintf("The value of this expression%s is over %d bytes (config.MaxValueSize), counting the bytes of its strings, keys and digits, %d (config.ElementSize) for each element, number and bool, and each part as often as the value holds it: comparisons, conversions and functions walk it that often, and a list that holds another twice, level after level, doubles at each level. gpuform stops here instead.", where, MaxValueSize, ElementSize)
	})
}

// stringTooLong is the diagnostic of a string of n > MaxFileSize bytes at
// rng.
func stringTooLong(rng hcl.Range, n int) *hcl.Diagnostic {
	return limitDiagnostic("String too long", rng, func(where string) string {
		return fmt.Sprintf("This expression%s makes a string of %d bytes; the limit is %d (config.MaxFileSize).", where, n, MaxFileSize)
	})
}

// templateTooLong is the diagnostic of a string template whose result
// would pass MaxFileSize at its part rng.
func templateTooLong(rng hcl.Range) *hcl.Diagnostic {
	return limitDiagnostic("String too long", rng, func(where string) string {
		return fmt.Sprintf("The string template%s would make a string of more than %d bytes (config.MaxFileSize) with this part; gpuform stops before building it.", where, MaxFileSize)
	})
}

// budgetSpent is the diagnostic of the measure that takes the evaluation
// over MaxEvalBytes.
func budgetSpent(rng hcl.Range) *hcl.Diagnostic {
	return limitDiagnostic("Evaluation budget spent", rng, func(where string) string {
		return fmt.Sprintf("Evaluating the configuration has handled more than %d bytes of values in all (config.MaxEvalBytes), counting each value as config.MaxValueSize does, each time it is used: local values, block arguments, function arguments and results, operands of == and !=, conditional results, string templates. It went over with this expression%s; the blocks after it are not evaluated.", MaxEvalBytes, where)
	})
}
