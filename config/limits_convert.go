package config

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// maxUnify is the most elements of a tuple or object converted to a
// collection of any whose elements differ in type: go-cty infers the
// element type by sorting the elements' types in quadratic time (100,000
// strings take minutes). Elements of one type need no inference and have
// no such limit.
const maxUnify = 1000

// unifiedType returns want with its element type inferred when want is a
// collection of any and from is a tuple or object type whose elements share
// one type, so that converting needs no unification. It fails when from
// has more than maxUnify elements of different types.
func unifiedType(from, want cty.Type) (cty.Type, error) {
	if !want.IsCollectionType() || want.ElementType() != cty.DynamicPseudoType {
		return want, nil
	}
	var elems []cty.Type
	switch {
	case from.IsTupleType():
		elems = from.TupleElementTypes()
	case from.IsObjectType():
		for _, t := range from.AttributeTypes() {
			elems = append(elems, t)
		}
	}
	if len(elems) == 0 {
		return want, nil
	}
	first := elems[0]
	for _, t := range elems[1:] {
		if !t.Equals(first) {
			if len(elems) > maxUnify {
				return want, fmt.Errorf("the %d elements are of different types; gpuform infers a common type for at most %d", len(elems), maxUnify)
			}
			return want, nil
		}
	}
	if first == cty.DynamicPseudoType {
		return want, nil
	}
	switch {
	case want.IsListType():
		return cty.List(first), nil
	case want.IsSetType():
		return cty.Set(first), nil
	default:
		return cty.Map(first), nil
	}
}

// convertUnified is convert.Convert through unifiedType.
func convertUnified(v cty.Value, want cty.Type) (cty.Value, error) {
	ty, err := unifiedType(v.Type(), want)
	if err != nil {
		return cty.NilVal, err
	}
	return convertCollection(v, ty)
}

// toCollectionFunc is orig (tolist, toset or tomap to a collection of any)
// with the element type inferred by unifiedType when it can be.
func toCollectionFunc(orig function.Function, want cty.Type) function.Function {
	return function.New(&function.Spec{
		Description: orig.Description(),
		Params: []function.Parameter{{
			Name: "v", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true,
		}},
		Type: func(args []cty.Value) (cty.Type, error) {
			ty, err := unifiedType(args[0].Type(), want)
			if err != nil {
				return cty.NilType, function.NewArgError(0, err)
			}
			if ty.Equals(want) || convert.GetConversionUnsafe(args[0].Type(), ty) == nil {
				return orig.ReturnTypeForValues(args)
			}
			return ty, nil
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			if retType.ElementType() == cty.DynamicPseudoType {
				return orig.Call(args)
			}
			return convertCollection(args[0], retType)
		},
	})
}

// bigTuple is the length from which convertCollection converts a tuple or
// object element by element instead of through go-cty, whose conversion to
// a list, set or map unifies the elements' types in quadratic time even
// when the element type is given.
const bigTuple = 64

// convertCollection is convert.Convert, in linear time for a large known
// tuple or object converted to a list, set or map of a known element type.
func convertCollection(v cty.Value, want cty.Type) (cty.Value, error) {
	vt := v.Type()
	if !want.IsCollectionType() || want.ElementType().HasDynamicTypes() ||
		!(vt.IsTupleType() && len(vt.TupleElementTypes()) >= bigTuple || vt.IsObjectType() && len(vt.AttributeTypes()) >= bigTuple) {
		return convert.Convert(v, want)
	}
	uv, marks := v.Unmark()
	if !uv.IsKnown() || uv.IsNull() || want.IsMapType() != vt.IsObjectType() {
		return convert.Convert(v, want)
	}
	et := want.ElementType()
	var list []cty.Value
	var m map[string]cty.Value
	if want.IsMapType() {
		m = make(map[string]cty.Value, uv.LengthInt())
	} else {
		list = make([]cty.Value, 0, uv.LengthInt())
	}
	for it := uv.ElementIterator(); it.Next(); {
		k, e := it.Element()
		ce, err := convert.Convert(e, et)
		if err != nil {
			if vt.IsObjectType() {
				return cty.NilVal, fmt.Errorf("element %q: %w", k.AsString(), err)
			}
			return cty.NilVal, fmt.Errorf("element %s: %w", k.AsBigFloat().Text('f', -1), err)
		}
		if m != nil {
			m[k.AsString()] = ce
		} else {
			list = append(list, ce)
		}
	}
	var out cty.Value
	switch {
	case want.IsMapType():
		out = cty.MapVal(m)
	case want.IsSetType():
		out = cty.SetVal(list)
	default:
		out = cty.ListVal(list)
	}
	return out.WithMarks(marks), nil
}
