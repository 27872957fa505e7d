package compile

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// blockTitle is a block's type as a sentence starts it: "Tenant",
// "Department".
func blockTitle(m *config.Meta) string {
	if m.Type == "" {
		return ""
	}
	return strings.ToUpper(m.Type[:1]) + m.Type[1:]
}

// departments checks the organisation tree under every scheduler: the
// scheduler can express it, each department's quota blocks are valid
// quotas, and each department has members (a department with neither
// tenants nor departments under it promises its quota to no one).
// Cycles and unknown parents are the configuration's reference errors.
func (v *validator) departments(sched Scheduler) {
	if len(v.cfg.Departments) == 0 {
		return
	}
	if _, ok := sched.(treeScheduler); !ok && sched != nil {
		// Once, at the first department: every one of them is the same error.
		d := v.cfg.Departments[0]
		v.errorf(d.DeclRange, "Departments need scheduler \"kueue\" or \"volcano\"", "%s", noTreeReason(v.cfg.Settings.Scheduler, d))
		return
	}
	used := map[*config.Department]bool{}
	for _, t := range v.cfg.Tenants {
		used[t.Department] = true
	}
	for _, d := range v.cfg.Departments {
		used[d.Parent] = true
	}
	for _, d := range v.cfg.Departments {
		for _, q := range d.Quotas {
			v.quota(&d.Meta, q)
		}
		if !used[d] {
			v.errorf(d.DeclRange, "Empty department", "No tenant and no department names %s, so its quota would be promised to no one. Set department = %s on its tenants (or parent = %s on its departments), or remove it.", d.Address, d.Address, d.Address)
		}
	}
}

// noTreeReason says why the stack's scheduler cannot hold department d,
// the first of the stack's.
func noTreeReason(scheduler string, d *config.Department) string {
	if scheduler == config.SchedulerNone {
		return "With scheduler = \"none\" each tenant is bounded by its namespace's ResourceQuota alone, and a ResourceQuota counts one namespace: nothing can hold a quota that the tenants of " + d.Address + " share, nor let one of them use what a sibling leaves free. Set scheduler = \"kueue\" (departments become Kueue Cohorts) or \"volcano\" (hierarchical Queues) in the gpuform block, or remove the department blocks and the tenants' department arguments."
	}
	return "Scheduler \"" + scheduler + "\" cannot express a department's shared quota. Set scheduler = \"kueue\" or \"volcano\" in the gpuform block, or remove the department blocks."
}

// kueueDepartments reports what Kueue would refuse of the departments'
// Cohorts, or what would join the wrong one:
//   - a department name that is not a DNS-1123 subdomain (the Cohort's
//     name and its members' spec.cohortName);
//   - a department named after the stack, which is the cohort of the
//     tenants outside the tree, or a tenant whose cohort names a
//     department without being in it: either would share quota across
//     the tree's boundary;
//   - borrowing or lending limits on a department without a parent
//     (Kueue's Cohort webhook: "must only be set when the Cohort has a
//     parent");
//   - a department's lending limit above what its subtree holds on the
//     pool (its own quota and what its members lend): it lends at most
//     that, and a larger figure says the author expected more;
//   - more flavors, covered resources or flavor-resource combinations in
//     the Cohort's resource group than Kueue takes (as a ClusterQueue's).
func kueueDepartments(cfg *config.Config, quotas *capacity.Quotas) hcl.Diagnostics {
	if len(cfg.Departments) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	names := map[string]*config.Department{}
	for _, d := range cfg.Departments {
		names[d.Name] = d
		if errs := validation.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
			diags = append(diags, errorAt(d.DeclRange, "Invalid Kueue cohort",
				"%s becomes the Kueue Cohort %q, and its members' spec.cohortName, which Kueue requires to be a DNS-1123 subdomain: %s.", d.Address, d.Name, strings.Join(errs, "; ")))
		}
		if d.Name == cfg.Settings.Stack {
			diags = append(diags, errorAt(d.DeclRange, "Department named after the stack",
				"%s would be the Kueue cohort %q, which is the cohort of the stack's tenants outside any department: they would share its quota. Rename the department.", d.Address, d.Name))
		}
	}
	for _, t := range cfg.Tenants {
		if d := names[t.Cohort]; d != nil && t.Department == nil {
			diags = append(diags, errorAt(t.Range("cohort"), "Cohort of a department",
				"%s's cohort %q is %s's Cohort; a tenant joins it with department = %s (which also counts what it may borrow there).", t.Address, t.Cohort, d.Address, d.Address))
		}
	}
	tree := newOrgTree(quotas)
	for _, dq := range quotas.Departments {
		d := dq.Department
		diags = append(diags, kueueCohortSizes(dq)...)
		sub := tree.sub(d)
		for _, b := range dq.Blocks {
			q := b.Block
			if d.Parent == nil {
				for _, attr := range []string{"borrowing_limit", "lending_limit"} {
					if q.HasAttr(attr) {
						diags = append(diags, errorAt(q.Range(attr), "Limit on a top-level department",
							"%s has no parent, and Kueue refuses borrowing and lending limits on a Cohort without one: there is no one to borrow from or lend to. Set parent on %s, or remove %s.", d.Address, d.Address, attr))
					}
				}
				continue
			}
			for key, n := range q.LendingLimit {
				r := b.Resource(key)
				if held := sub[b.Pool][r]; int64(n) > held {
					diags = append(diags, errorAt(q.KeyRange("lending_limit", key), "Lending limit over the department's quota",
						"lending_limit[%q] is %d, but %s holds %d of it on pool %s (its own quota and what its members lend): it can lend at most that.", key, n, d.Address, held, b.Pool))
				}
			}
		}
	}
	return diags
}

// kueueCohortSizes checks department dq's Cohort, as Department writes it
// (one resource group, a flavor per quota block), against the limits a
// ClusterQueue's resource group has too: Kueue's Cohort CRD and webhook
// (validateResourceGroups) share them.
func kueueCohortSizes(dq *capacity.DepartmentQuota) hcl.Diagnostics {
	d := dq.Department
	flavors, covered := len(dq.Blocks), len(dq.Covered())
	if flavors == 0 {
		return nil
	}
	last := d.Quotas[len(d.Quotas)-1].DeclRange
	switch {
	case flavors > kueueMaxFlavors:
		return hcl.Diagnostics{errorAt(d.Quotas[kueueMaxFlavors].DeclRange, "Too many quota blocks for Kueue",
			"%s has %d quota blocks, each a flavor of its Cohort, and Kueue takes at most %d flavors in a resource group (maxItems); give it quotas on fewer pools.", d.Address, flavors, kueueMaxFlavors)}
	case covered > kueueMaxCoveredResources:
		return hcl.Diagnostics{errorAt(last, "Too many resources for Kueue",
			"%s's Cohort would cover %d resources (the GPUs and MIG profiles of its quota blocks), and Kueue takes at most %d (maxItems); give it quotas on fewer profiles.", d.Address, covered, kueueMaxCoveredResources)}
	case flavors*covered > kueueMaxFlavorResources:
		return hcl.Diagnostics{errorAt(last, "Too many flavor-resource combinations for Kueue",
			"%s's Cohort would have %d flavors (quota blocks) × %d resources = %d flavor-resource combinations, and Kueue refuses more than %d in a resource group; give it quotas on fewer pools or fewer MIG profiles.", d.Address, flavors, covered, flavors*covered, kueueMaxFlavorResources)}
	}
	return nil
}
