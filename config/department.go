package config

import (
	"fmt"
	"math"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Department is a department block instance: a node of the organisation
// tree. Tenants name their department, departments their parent, to any
// depth; each department has quotas of its own on pools, shared by
// everything under it (under Kueue: a Cohort with parentName).
type Department struct {
	Meta
	// Parent is the department this one is part of; nil at the top of
	// the tree.
	Parent *Department `config:"parent,ref,omitempty"`
	// Quotas are the department's own quotas, one block per pool, shaped
	// like a tenant's: what its tenants and sub-departments share on top
	// of their own, with borrowing and lending limits towards its parent.
	Quotas []*Quota `config:"quota,block"`
	// Weight is the department's fair-sharing weight; 0 with HasWeight
	// false when not set (the scheduler's default).
	Weight    float64 `config:"weight,omitempty"`
	HasWeight bool    `config:"-"`
}

// departmentSchema is the department block: a node of the organisation
// tree with quotas of its own.
func departmentSchema() BlockSchema {
	return BlockSchema{Type: TypeDepartment, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
		ref("parent", TypeDepartment, false),
		hideable(attr("weight", cty.Number, "not set (the scheduler's default, 1)")),
	}, Blocks: []BlockSchema{
		{Type: "quota", Labels: []string{"pool"}, Many: true, Attrs: []AttrSchema{
			attr("slices", numberMap, "{}"),
			attr("gpus", cty.Number, "0"),
			attr("borrowing_limit", numberMap, "no limit"),
			attr("lending_limit", numberMap, "no limit"),
		}},
	}}
}

// decodeDepartment decodes one department block instance; its parent,
// a department block too, is evaluated first (the reference graph
// refuses a cycle).
func (l *loader) decodeDepartment(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, ok bool) {
	meta := d.meta
	dep := &Department{Meta: *meta}
	if addr := d.ref("parent", TypeDepartment); addr != "" {
		dep.Parent = lookup(l.insts, l.insts.depts, addr)
		if dep.Parent == nil {
			// A parent that failed to decode: its error is the one; this
			// department is not recorded, so nothing under it is compiled
			// without its ceiling.
			d.ok = false
		}
	}
	if d.has("weight") {
		dep.Weight, dep.HasWeight = d.float("weight", 0), true
		if dep.Weight < 0 || math.IsInf(dep.Weight, 0) {
			d.fail("Invalid weight", "weight must be zero or more: the department's fair-sharing weight against its siblings (0: it borrows only what no sibling wants).", meta.Range("weight"))
		}
	}
	dep.Quotas = l.decodeQuotas(d, content, ctx, schema)
	dep.Meta = *meta
	if d.ok && ok {
		record(l.insts, l.insts.depts, &l.insts.cfg.Departments, dep.Address, dep)
	}
}

// tenantDepartment links tenant t to the department its department
// argument names; the department's name becomes its cohort. A tenant sets
// cohort or department, not both: the department is its cohort.
func (l *loader) tenantDepartment(d *decoder, t *Tenant) {
	addr := d.ref("department", TypeDepartment)
	if addr == "" {
		return // not set, or refValue reported what it is instead
	}
	t.Department = lookup(l.insts, l.insts.depts, addr)
	if t.Department == nil {
		d.ok = false // the department's own error is the one
		return
	}
	if d.has("cohort") {
		d.fail("Conflicting cohort", fmt.Sprintf("A tenant in a department shares quota in the department's cohort (%q); remove cohort, or the department.", t.Department.Name), d.meta.Range("cohort"))
	}
	t.Cohort = t.Department.Name
}
