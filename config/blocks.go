package config

import (
	"reflect"
	"strings"
)

// Blocks returns the Meta of every instance of the blocks at path in c
// ("tenant", "tenant.quota", "pool.time_slicing": block types as Schema
// nests them), in source order, and false for a path the model has no
// blocks at. It follows the config tags, so a new block type needs no
// change here.
func (c *Config) Blocks(path string) ([]*Meta, bool) {
	plan, err := planOf(reflect.TypeFor[Config](), true)
	if err != nil {
		panic(err) // Config's own tags are checked by its tests
	}
	var vals []reflect.Value
	if c != nil {
		vals = []reflect.Value{reflect.ValueOf(c).Elem()}
	}
	for _, name := range strings.Split(path, ".") {
		f, ok := plan.block(name)
		if !ok {
			return nil, false
		}
		var next []reflect.Value
		for _, v := range vals {
			next = append(next, blockInstances(v.Field(f.index))...)
		}
		vals, plan = next, f.sub
	}
	out := make([]*Meta, 0, len(vals))
	for _, v := range vals {
		if m := plan.metaOf(v); m != nil {
			out = append(out, m)
		}
	}
	return out, true
}

// block returns the nested-block field named name.
func (p *structPlan) block(name string) (tagField, bool) {
	for _, f := range p.fields {
		if f.kind == kindBlock && f.name == name {
			return f, true
		}
	}
	return tagField{}, false
}
