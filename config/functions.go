package config

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the functions available in expressions: go-cty's
// standard library under Terraform's names, plus file() reading from fsys.
// Each is wrapped twice: by limitFunctions, which bounds what it may build,
// and by m, which measures its arguments before anything walks them.
func functions(fsys fs.FS, m *meter) map[string]function.Function {
	return m.wrapAll(limitFunctions(map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"distinct":        distinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"index":           stdlib.IndexFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          lengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"title":           stdlib.TitleFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":        stdlib.MakeToFunc(cty.String),
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"upper":           stdlib.UpperFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
		"file":            fileFunc(fsys),
	}))
}

// distinctFunc is go-cty's distinct in linear time: it compares an element
// only with the kept elements of the same hash, where go-cty's compares it
// with every kept element (100,000 distinct numbers take hours).
var distinctFunc = function.New(&function.Spec{
	Description: stdlib.DistinctFunc.Description(),
	Params:      stdlib.DistinctFunc.Params(),
	Type: func(args []cty.Value) (cty.Type, error) {
		return args[0].Type(), nil
	},
	RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder {
		return b.NotNull()
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		list := args[0]
		if !list.IsWhollyKnown() {
			return cty.UnknownVal(retType), nil
		}
		var kept []cty.Value
		byHash := map[int][]int{} // hash -> indexes in kept
		for it := list.ElementIterator(); it.Next(); {
			_, v := it.Element()
			h := v.Hash()
			dup := false
			for _, i := range byHash[h] {
				if kept[i].Equals(v).True() {
					dup = true
					break
				}
			}
			if !dup {
				byHash[h] = append(byHash[h], len(kept))
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			return cty.ListValEmpty(retType.ElementType()), nil
		}
		return cty.ListVal(kept), nil
	},
})

// lengthFunc is Terraform's length: the number of elements of a collection
// or structure, or of characters of a string (go-cty's stdlib length refuses
// strings, which validation conditions test all the time).
var lengthFunc = function.New(&function.Spec{
	Description: "Returns the number of elements of a collection or the number of characters of a string.",
	Params: []function.Parameter{{
		Name:             "value",
		Type:             cty.DynamicPseudoType,
		AllowDynamicType: true,
		AllowUnknown:     true,
		AllowMarked:      true,
	}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		if ty == cty.String || ty == cty.DynamicPseudoType || ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType() {
			return cty.Number, nil
		}
		return cty.NilType, function.NewArgErrorf(0, "argument must be a string, a collection or a structure, not %s", ty.FriendlyName())
	},
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v, marks := args[0].Unmark()
		if v.Type() == cty.String {
			n, err := stdlib.StrlenFunc.Call([]cty.Value{v})
			return n.WithMarks(marks), err
		}
		return v.Length().WithMarks(marks), nil
	},
})

// fileFunc reads a UTF-8 file relative to the configuration directory. It
// refuses paths that leave the directory and files over MaxFileSize.
func fileFunc(fsys fs.FS) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a UTF-8 file relative to the configuration directory.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder {
			return b.NotNull()
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := path.Clean(args[0].AsString())
			if !fs.ValidPath(p) {
				return cty.NilVal, fmt.Errorf("%q is outside the configuration directory; file() reads only files inside it", args[0].AsString())
			}
			src, diags := readLimited(fsys, p)
			if diags.HasErrors() {
				return cty.NilVal, fmt.Errorf("%s", strings.TrimSuffix(diags[0].Detail, "."))
			}
			if !utf8.Valid(src) {
				return cty.NilVal, fmt.Errorf("%s is not valid UTF-8", p)
			}
			return cty.StringVal(string(src)), nil
		},
	})
}
