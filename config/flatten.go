package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// tagKey is the struct tag key of the config tags (see the package
// documentation).
const tagKey = "config"

// FlatAttr is one attribute of a block instance, flattened to a path.
type FlatAttr struct {
	// Path is the attribute's path within its block: weight,
	// labels["team"], quota["a100"].gpus, device[0].slices["1g.10gb"],
	// replicas.min.
	Path string
	// Value is the attribute's value as plain Go (see the package
	// documentation).
	Value any
	// Sensitive is true when the value derives from a sensitive variable;
	// outputs must not show Value then.
	Sensitive bool
}

// FlatBlock is one block instance reduced to its attributes.
type FlatBlock struct {
	// Type is the block type: tenant.
	Type string
	// Address is the instance's config address: tenant.risk, gpuform.
	Address string
	// Attrs are the attributes the block lists, in the order of its
	// struct's fields.
	Attrs []FlatAttr
}

// Flatten lists every block instance of c with its attributes: the
// top-level block types in the order of Config's fields (the order of
// Schema), the instances of each in source order. It returns nil for a nil
// c.
func (c *Config) Flatten() []FlatBlock {
	if c == nil {
		return nil
	}
	return FlattenStruct(c)
}

// FlattenStruct is Flatten for any pointer to a struct whose fields are
// tagged as Config's are, holding block structs tagged in turn: a test's
// block type flattens as the real ones do. It panics when v is not such a
// pointer or a tag is missing or malformed, a programming error.
func FlattenStruct(v any) []FlatBlock {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: FlattenStruct of %T, want a pointer to a struct", v))
	}
	plan, err := planOf(rv.Elem().Type(), true)
	if err != nil {
		panic(err)
	}
	var out []FlatBlock
	for _, f := range plan.fields {
		for _, inst := range blockInstances(rv.Elem().Field(f.index)) {
			b := FlatBlock{Type: f.name, Address: f.name}
			if m := f.sub.metaOf(inst); m != nil && m.Address != "" {
				b.Address = m.Address
			}
			b.Attrs = f.sub.flatten(nil, inst, "", false)
			if f.omitEmpty && len(b.Attrs) == 0 {
				continue
			}
			out = append(out, b)
		}
	}
	return out
}

// blockInstances returns the non-nil block structs a *T or []*T field holds.
func blockInstances(v reflect.Value) []reflect.Value {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		return []reflect.Value{v.Elem()}
	}
	out := make([]reflect.Value, 0, v.Len())
	for i := 0; i < v.Len(); i++ {
		if e := v.Index(i); !e.IsNil() {
			out = append(out, e.Elem())
		}
	}
	return out
}

// flatten appends the attributes of block v (a struct of p's type) to out,
// their paths prefixed with prefix. inherited is true when the parent's
// attribute naming this nested block is sensitive.
func (p *structPlan) flatten(out []FlatAttr, v reflect.Value, prefix string, inherited bool) []FlatAttr {
	meta := p.metaOf(v)
	sensitive := func(name string) bool {
		return inherited || (meta != nil && meta.IsSensitive(name))
	}
	for _, f := range p.fields {
		fv := v.Field(f.index)
		switch f.kind {
		case kindLabel:
		case kindBlock:
			out = flattenNested(out, fv, f, prefix, sensitive(f.name))
		case kindRef:
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			out = append(out, FlatAttr{Path: prefix + f.name, Value: refValue(fv)})
		case kindAttr:
			if f.omitEmpty && isEmpty(fv) || f.alt != "" && isEmpty(fv) && !isEmpty(v.Field(p.field(f.alt).index)) {
				continue
			}
			s := sensitive(f.root)
			if f.sensitiveIf != "" && v.Field(p.field(f.sensitiveIf).index).Bool() {
				s = true
			}
			out = appendValue(out, prefix+f.name, fv, s)
		}
	}
	return out
}

// flattenNested appends the attributes of the nested blocks field fv holds.
func flattenNested(out []FlatAttr, fv reflect.Value, f tagField, prefix string, sensitive bool) []FlatAttr {
	insts := blockInstances(fv)
	if fv.Kind() == reflect.Pointer {
		for _, inst := range insts {
			out = f.sub.flatten(out, inst, prefix+f.name+".", sensitive)
		}
		return out
	}
	if f.sub.label < 0 {
		for i, inst := range insts {
			out = f.sub.flatten(out, inst, fmt.Sprintf("%s%s[%d].", prefix, f.name, i), sensitive)
		}
		return out
	}
	label := func(inst reflect.Value) string { return inst.Field(f.sub.fields[f.sub.label].index).String() }
	sort.SliceStable(insts, func(i, j int) bool { return label(insts[i]) < label(insts[j]) })
	for _, inst := range insts {
		out = f.sub.flatten(out, inst, fmt.Sprintf("%s%s[%q].", prefix, f.name, label(inst)), sensitive)
	}
	return out
}

// appendValue appends attribute path with value v: one path per key for a
// map, unless it is sensitive: its keys are part of the value (a model's
// env names), so a sensitive map is one path.
func appendValue(out []FlatAttr, path string, v reflect.Value, sensitive bool) []FlatAttr {
	switch v.Kind() {
	case reflect.Map:
		if sensitive {
			return append(out, FlatAttr{Path: path, Value: v.Interface(), Sensitive: true})
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, FlatAttr{Path: fmt.Sprintf("%s[%q]", path, k), Value: v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())).Interface(), Sensitive: sensitive})
		}
		return out
	case reflect.Slice:
		l := make([]any, v.Len())
		for i := range l {
			l[i] = v.Index(i).Interface()
		}
		return append(out, FlatAttr{Path: path, Value: l, Sensitive: sensitive})
	}
	if cv, ok := v.Interface().(cty.Value); ok {
		return append(out, FlatAttr{Path: path, Value: ctyValue(cv), Sensitive: sensitive})
	}
	return append(out, FlatAttr{Path: path, Value: v.Interface(), Sensitive: sensitive})
}

// refValue is the address (or list of addresses) a reference field holds;
// nil for a nil reference.
func refValue(v reflect.Value) any {
	address := func(p reflect.Value) any {
		if p.IsNil() {
			return nil
		}
		return p.Interface().(metaOf).meta().Address
	}
	if v.Kind() == reflect.Pointer {
		return address(v)
	}
	l := make([]any, v.Len())
	for i := range l {
		l[i] = address(v.Index(i))
	}
	return l
}

// isEmpty reports whether v is its type's zero value or an empty list or map.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

// ctyValue converts a cty value to plain Go (via JSON) for comparison and
// display; unknown or unusable values become nil.
func ctyValue(v cty.Value) any {
	if v == cty.NilVal || v == cty.DynamicVal {
		return nil
	}
	v, _ = v.UnmarkDeep()
	if !v.IsWhollyKnown() || v.IsNull() {
		return nil
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}
