package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// fieldKind is what a tagged field holds.
type fieldKind int

const (
	kindAttr  fieldKind = iota // an attribute's value
	kindRef                    // a reference to another block
	kindBlock                  // nested blocks (top-level blocks in Config)
	kindLabel                  // the block's label
)

// tagField is one tagged field of a struct, parsed.
type tagField struct {
	index int // in the struct
	name  string
	// root is name up to its first dot: the attribute whose sensitivity
	// a part of an object attribute (replicas.min) has.
	root      string
	kind      fieldKind
	omitEmpty bool
	// alt and sensitiveIf name sibling attributes (see the config tag).
	alt, sensitiveIf string
	// sub is the plan of a block field's struct.
	sub *structPlan
}

// structPlan is a struct type's tagged fields in field order.
type structPlan struct {
	typ    reflect.Type
	fields []tagField
	// meta is the index of the embedded Meta, -1 when there is none.
	meta int
	// label is the index in fields of the label field, -1 when there is none.
	label int
}

// metaOf returns the Meta of v, a struct of p's type, or nil.
func (p *structPlan) metaOf(v reflect.Value) *Meta {
	switch {
	case p.meta < 0:
		return nil
	case v.CanAddr():
		return v.Field(p.meta).Addr().Interface().(*Meta)
	}
	m := v.Field(p.meta).Interface().(Meta)
	return &m
}

// field returns the attribute field named name; planOf made sure it exists.
func (p *structPlan) field(name string) tagField {
	for _, f := range p.fields {
		if f.kind == kindAttr && f.name == name {
			return f
		}
	}
	panic("config: " + p.typ.Name() + " has no attribute " + name)
}

// planOf parses the config tags of struct type t and, recursively, of its
// nested blocks' types. top is true for Config's type, whose fields must
// all be blocks.
func planOf(t reflect.Type, top bool) (*structPlan, error) {
	return planWithin(t, top, map[reflect.Type]bool{})
}

func planWithin(t reflect.Type, top bool, within map[reflect.Type]bool) (*structPlan, error) {
	if within[t] {
		return nil, fmt.Errorf("config: block type %s nests itself", t.Name())
	}
	within[t] = true
	defer delete(within, t)
	p := &structPlan{typ: t, meta: -1, label: -1}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Anonymous && sf.Type == reflect.TypeFor[Meta]() {
			p.meta = i
			continue
		}
		if !sf.IsExported() {
			continue
		}
		f, skip, err := fieldOf(i, sf, top, within)
		if err != nil {
			return nil, fmt.Errorf("config: %s.%s: %w", t.Name(), sf.Name, err)
		}
		if skip {
			continue
		}
		if f.kind == kindLabel {
			if p.label >= 0 {
				return nil, fmt.Errorf("config: %s has two label fields", t.Name())
			}
			p.label = len(p.fields)
		}
		p.fields = append(p.fields, f)
	}
	return p, p.checkSiblings()
}

// fieldOf parses the tag of field sf (index i) and checks that the field's
// type suits it; skip is true for a field tagged "-".
func fieldOf(i int, sf reflect.StructField, top bool, within map[reflect.Type]bool) (f tagField, skip bool, err error) {
	tag, ok := sf.Tag.Lookup(tagKey)
	if !ok {
		return f, false, fmt.Errorf("no %s tag: name the attribute the field holds, or tag it %s:\"-\"", tagKey, tagKey)
	}
	if tag == "-" {
		return f, true, nil
	}
	if f, err = parseTag(i, tag); err != nil {
		return f, false, err
	}
	if top && f.kind != kindBlock {
		return f, false, fmt.Errorf("a top-level field must be a block or \"-\"")
	}
	switch f.kind {
	case kindBlock, kindRef:
		elem, ok := blockElem(sf.Type)
		if !ok {
			return f, false, fmt.Errorf("a block or reference must be a *T or []*T where T embeds Meta, not %s", sf.Type)
		}
		if f.kind == kindBlock {
			f.sub, err = planWithin(elem, false, within)
		}
	case kindLabel:
		if sf.Type.Kind() != reflect.String {
			err = fmt.Errorf("a label must be a string, not %s", sf.Type)
		}
	default:
		if !attrType(sf.Type) {
			err = fmt.Errorf("an attribute cannot be a %s", sf.Type)
		}
	}
	return f, false, err
}

// parseTag parses a config tag other than "-".
func parseTag(index int, tag string) (tagField, error) {
	parts := strings.Split(tag, ",")
	f := tagField{index: index, name: parts[0]}
	f.root, _, _ = strings.Cut(f.name, ".")
	if f.name == "" {
		return f, fmt.Errorf("tag %q names nothing", tag)
	}
	kinds := 0
	for _, opt := range parts[1:] {
		key, val, hasVal := strings.Cut(opt, "=")
		switch {
		case opt == "omitempty":
			f.omitEmpty = true
		case opt == "ref":
			f.kind, kinds = kindRef, kinds+1
		case opt == "block":
			f.kind, kinds = kindBlock, kinds+1
		case opt == "label":
			f.kind, kinds = kindLabel, kinds+1
		case key == "alt" && hasVal && val != "":
			f.alt = val
		case key == "sensitiveif" && hasVal && val != "":
			f.sensitiveIf = val
		default:
			return f, fmt.Errorf("tag %q: unknown option %q", tag, opt)
		}
	}
	if kinds > 1 {
		return f, fmt.Errorf("tag %q: at most one of ref, block and label", tag)
	}
	if f.kind != kindAttr && (f.alt != "" || f.sensitiveIf != "") {
		return f, fmt.Errorf("tag %q: alt and sensitiveif are for attributes", tag)
	}
	return f, nil
}

// checkSiblings checks that the attributes alt and sensitiveif name exist,
// a sensitiveif one being a bool.
func (p *structPlan) checkSiblings() error {
	attrs := map[string]reflect.Type{}
	for _, f := range p.fields {
		if f.kind == kindAttr {
			attrs[f.name] = p.typ.Field(f.index).Type
		}
	}
	for _, f := range p.fields {
		if _, ok := attrs[f.alt]; f.alt != "" && !ok {
			return fmt.Errorf("config: %s.%s: alt=%s names no attribute", p.typ.Name(), f.name, f.alt)
		}
		if t, ok := attrs[f.sensitiveIf]; f.sensitiveIf != "" && (!ok || t.Kind() != reflect.Bool) {
			return fmt.Errorf("config: %s.%s: sensitiveif=%s names no bool attribute", p.typ.Name(), f.name, f.sensitiveIf)
		}
	}
	return nil
}

// blockElem returns T for a *T or []*T where T is a struct embedding Meta.
func blockElem(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	f, ok := t.Elem().FieldByName("Meta")
	return t.Elem(), ok && f.Anonymous && f.Type == reflect.TypeFor[Meta]()
}

// attrType reports whether an attribute may have type t: a scalar, a list
// of scalars, a map from strings to scalars, or a cty.Value.
func attrType(t reflect.Type) bool {
	if t == reflect.TypeFor[cty.Value]() {
		return true
	}
	switch t.Kind() {
	case reflect.Slice:
		return scalar(t.Elem())
	case reflect.Map:
		return t.Key().Kind() == reflect.String && scalar(t.Elem())
	}
	return scalar(t)
}

func scalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
