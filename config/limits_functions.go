package config

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// limitFunctions wraps the functions that can build values much larger than
// their arguments, so that their results stay within MaxCollection
// elements and MaxFileSize bytes: the growth of setproduct, flatten, join,
// replace, indent, format and formatlist is checked before the call, the
// nesting of jsondecode's input too, and every wrapped result after it.
func limitFunctions(funcs map[string]function.Function) map[string]function.Function {
	pre := map[string]func(args []cty.Value) error{
		"setproduct": checkSetProduct,
		"flatten":    checkFlatten,
		"join":       checkJoin,
		"replace":    checkReplace,
		"indent":     checkIndent,
		"format":     checkFormat,
		"formatlist": checkFormat,
		"jsondecode": checkJSONDepth,
		"csvdecode":  nil,
		"concat":     nil,
		"merge":      nil,
		"setunion":   nil,
		"zipmap":     nil,
		"split":      nil,
		"chunklist":  nil,
		"jsonencode": nil,
	}
	for name, check := range pre {
		if f, ok := funcs[name]; ok {
			funcs[name] = limitFunction(f, check)
		}
	}
	for name, want := range map[string]cty.Type{
		"tolist": cty.List(cty.DynamicPseudoType),
		"toset":  cty.Set(cty.DynamicPseudoType),
		"tomap":  cty.Map(cty.DynamicPseudoType),
	} {
		if f, ok := funcs[name]; ok {
			funcs[name] = toCollectionFunc(f, want)
		}
	}
	return funcs
}

// limitFunction wraps f with check (which may be nil) before the call and a
// size check of the result after it. The wrapper has f's parameters, so
// arguments reach it as they reach f (null, unknown and marked values
// included or not alike), and f's own call repeats none of the work.
func limitFunction(f function.Function, check func([]cty.Value) error) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if check != nil {
				known := make([]cty.Value, len(args))
				for i, a := range args {
					known[i], _ = a.UnmarkDeep()
				}
				if err := check(known); err != nil {
					return cty.NilVal, err
				}
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			return v, checkResult(v)
		},
	})
}

// checkResult refuses a known result over MaxCollection elements or
// MaxFileSize bytes.
func checkResult(v cty.Value) error {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		if n := len(v.AsString()); n > MaxFileSize {
			return fmt.Errorf("the result would be %d bytes; the limit is %d (config.MaxFileSize)", n, MaxFileSize)
		}
	case ty.IsCollectionType() || ty.IsTupleType():
		if n := v.LengthInt(); n > MaxCollection {
			return fmt.Errorf("the result would have %d elements; the limit is %d (config.MaxCollection)", n, MaxCollection)
		}
	}
	return nil
}

// lengthOf is the length of a known collection or string argument, else 0.
func lengthOf(v cty.Value) int {
	if !v.IsKnown() || v.IsNull() {
		return 0
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return len(v.AsString())
	case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
		return v.LengthInt()
	}
	return 0
}

// tooManyElements is the error of a call that would make at least n >
// MaxCollection elements.
func tooManyElements(n int) error {
	return fmt.Errorf("the result would have %d or more elements; the limit is %d (config.MaxCollection), so it is not built", n, MaxCollection)
}

// tooLarge is the error of a call that would make a string of at least n >
// MaxFileSize bytes.
func tooLarge(n int) error {
	return fmt.Errorf("the result would be %d or more bytes; the limit is %d (config.MaxFileSize), so it is not built", n, MaxFileSize)
}

// checkSetProduct bounds the product of the sets' sizes.
func checkSetProduct(args []cty.Value) error {
	n := 1
	for _, a := range args {
		n *= lengthOf(a)
		if n > MaxCollection {
			return tooManyElements(n)
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// checkFlatten bounds the elements of the flattened list.
func checkFlatten(args []cty.Value) error {
	n := 0
	var count func(v cty.Value) bool
	count = func(v cty.Value) bool {
		ty := v.Type()
		if !v.IsKnown() || v.IsNull() || !(ty.IsListType() || ty.IsSetType() || ty.IsTupleType()) {
			n++
			return n <= MaxCollection
		}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if !count(e) {
				return false
			}
		}
		return true
	}
	if len(args) == 1 && !count(args[0]) {
		return tooManyElements(n)
	}
	return nil
}

// checkJoin bounds the joined string: the elements plus a separator
// between each two.
func checkJoin(args []cty.Value) error {
	if len(args) == 0 {
		return nil
	}
	sep := lengthOf(args[0])
	n := 0
	for _, l := range args[1:] {
		if !l.IsKnown() || l.IsNull() || !l.CanIterateElements() {
			continue
		}
		for it := l.ElementIterator(); it.Next(); {
			_, e := it.Element()
			n += sep + lengthOf(e)
			if n > MaxFileSize {
				return tooLarge(n)
			}
		}
	}
	return nil
}

// checkReplace bounds a plain (not /regex/) replacement exactly.
func checkReplace(args []cty.Value) error {
	if len(args) != 3 {
		return nil
	}
	for _, a := range args {
		if !a.IsKnown() || a.IsNull() || a.Type() != cty.String {
			return nil
		}
	}
	s, sub, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
	if len(sub) >= 2 && sub[0] == '/' && sub[len(sub)-1] == '/' {
		return nil
	}
	if len(repl) <= len(sub) {
		return nil
	}
	matches := strings.Count(s, sub)
	if sub == "" {
		matches = utf8.RuneCountInString(s) + 1
	}
	if n := len(s) + matches*(len(repl)-len(sub)); n > MaxFileSize {
		return tooLarge(n)
	}
	return nil
}

// checkIndent bounds the prefix added to every line.
func checkIndent(args []cty.Value) error {
	if len(args) != 2 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.Number ||
		!args[1].IsKnown() || args[1].IsNull() || args[1].Type() != cty.String {
		return nil
	}
	spaces, _ := args[0].AsBigFloat().Int64()
	s := lengthOf(args[1])
	lines := strings.Count(args[1].AsString(), "\n")
	if n := int64(s) + int64(lines)*max(spaces, 0); n > MaxFileSize {
		return tooLarge(int(min(n, 1<<40)))
	}
	return nil
}

// checkFormat bounds the padding a format string asks for: the sum of its
// widths and precisions (fmt itself caps each at a million).
func checkFormat(args []cty.Value) error {
	if len(args) == 0 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String {
		return nil
	}
	f := args[0].AsString()
	total := len(f)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		for i++; i < len(f) && !(f[i] >= 'a' && f[i] <= 'z' || f[i] >= 'A' && f[i] <= 'Z' || f[i] == '%'); i++ {
			if f[i] < '0' || f[i] > '9' {
				continue
			}
			w := 0
			for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
				w = min(w*10+int(f[i]-'0'), MaxFileSize+1)
			}
			total += w
			if total > MaxFileSize {
				return tooLarge(total)
			}
			i--
		}
	}
	return nil
}

// checkJSONDepth refuses JSON nested deeper than MaxNesting, which the
// decoder would follow by recursion.
func checkJSONDepth(args []cty.Value) error {
	if len(args) != 1 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String {
		return nil
	}
	s := args[0].AsString()
	depth, inString := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			if depth > MaxNesting {
				return fmt.Errorf("the JSON is nested more than %d levels deep (config.MaxNesting)", MaxNesting)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}
