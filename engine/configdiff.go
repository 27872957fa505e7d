package engine

import (
	"reflect"
	"sort"

	"github.com/gpuform/gpuform/config"
)

// BlockChange is one block of the configuration added, changed or removed
// between two versions of it (a pull request's base and head): the desired
// state, not the cluster.
type BlockChange struct {
	// Address is the block's config address: tenant.risk, var.model_bucket.
	Address string `json:"address"`
	// Type is the block type: gpuform, cluster, variable, priority,
	// mig_layout, pool, tenant, model.
	Type string `json:"type"`
	// Action is ActionCreate (the block is new), ActionUpdate or ActionDelete.
	Action Action `json:"action"`
	// Attributes are the changed attributes, by path; for a new block every
	// attribute it sets, for a removed one none. Values of sensitive
	// attributes are SensitiveValue.
	Attributes []FieldDiff `json:"attributes"`
}

// flatBlock is a block's attributes indexed by path.
type flatBlock struct {
	typ   string
	attrs map[string]config.FlatAttr
	// order lists the paths in the order the block lists them.
	order []string
}

// indexBlocks indexes flattened blocks by address.
func indexBlocks(blocks []config.FlatBlock) map[string]*flatBlock {
	out := make(map[string]*flatBlock, len(blocks))
	for _, fb := range blocks {
		b := &flatBlock{typ: fb.Type, attrs: make(map[string]config.FlatAttr, len(fb.Attrs))}
		for _, a := range fb.Attrs {
			if _, ok := b.attrs[a.Path]; !ok {
				b.order = append(b.order, a.Path)
			}
			b.attrs[a.Path] = a
		}
		out[fb.Address] = b
	}
	return out
}

// ConfigDiff compares two configurations block by block and attribute by
// attribute: blocks are matched by address, so a renamed block is a removal
// and an addition. base or head may be nil (an empty configuration). The
// result is ordered by block type, then address.
func ConfigDiff(base, head *config.Config) []BlockChange {
	return diffBlocks(base.Flatten(), head.Flatten())
}

// diffBlocks is ConfigDiff of two flattened configurations. Blocks are
// ordered by type in the order of config.Schema (types it does not know
// last, by name), then by address.
func diffBlocks(base, head []config.FlatBlock) []BlockChange {
	before, after := indexBlocks(base), indexBlocks(head)
	var out []BlockChange
	for addr, b := range before {
		a, ok := after[addr]
		if !ok {
			out = append(out, BlockChange{Address: addr, Type: b.typ, Action: ActionDelete, Attributes: []FieldDiff{}})
			continue
		}
		if fields := diffAttrs(b, a); len(fields) > 0 {
			out = append(out, BlockChange{Address: addr, Type: a.typ, Action: ActionUpdate, Attributes: fields})
		}
	}
	for addr, a := range after {
		if _, ok := before[addr]; ok {
			continue
		}
		fields := []FieldDiff{}
		for _, p := range a.order {
			fields = append(fields, FieldDiff{Path: p, Op: FieldAdd, After: shown(a.attrs[p])})
		}
		out = append(out, BlockChange{Address: addr, Type: a.typ, Action: ActionCreate, Attributes: fields})
	}
	rank := map[string]int{}
	for i, b := range config.Schema() {
		rank[b.Type] = i
	}
	rankOf := func(typ string) int {
		if r, ok := rank[typ]; ok {
			return r
		}
		return len(rank)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := rankOf(a.Type), rankOf(b.Type); ra != rb {
			return ra < rb
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		return a.Address < b.Address
	})
	return out
}

// shown is an attribute's value as outputs may show it.
func shown(e config.FlatAttr) any {
	if e.Sensitive {
		return SensitiveValue
	}
	return e.Value
}

// diffAttrs lists the attribute paths that differ between two versions of
// a block: head's paths in head's order, then those only base has.
func diffAttrs(b, a *flatBlock) []FieldDiff {
	var out []FieldDiff
	for _, p := range a.order {
		ae := a.attrs[p]
		be, ok := b.attrs[p]
		sensitive := ae.Sensitive || (ok && be.Sensitive)
		switch {
		case !ok:
			out = append(out, FieldDiff{Path: p, Op: FieldAdd, After: shown(ae)})
		case !reflect.DeepEqual(be.Value, ae.Value) || be.Sensitive != ae.Sensitive:
			f := FieldDiff{Path: p, Op: FieldChange, Before: be.Value, After: ae.Value}
			if sensitive {
				f.Before, f.After = SensitiveValue, SensitiveValue
			}
			out = append(out, f)
		}
	}
	for _, p := range b.order {
		if _, ok := a.attrs[p]; !ok {
			out = append(out, FieldDiff{Path: p, Op: FieldRemove, Before: shown(b.attrs[p])})
		}
	}
	return out
}
