package compile

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// volcanoMaxDepth is how many levels of Queues under root Volcano's Queue
// webhook takes by default (v1.15.1, cmd/webhook-manager/app/options:
// --max-queue-depth, default 5; validateQueueDepth counts a Queue under
// root as level 1).
const volcanoMaxDepth = 5

// volcanoDepartments reports what Volcano's Queue webhook (v1.15.1,
// pkg/webhooks/admission/queues/validate) would refuse of the tree's
// Queues, or what Volcano cannot express of a department:
//   - a department Queue name (volcanoQueueName) that is not a DNS-1123
//     subdomain, or that is a tenant's namespace (its Queue's name);
//   - a department's weight: Kueue fair sharing's, which Volcano's
//     capacity plugin does not read;
//   - a department's lending limit: a Volcano Queue has none (what a Queue
//     leaves idle its siblings use up to their capability, and Volcano
//     reclaims it back);
//   - borrowing limits on a top-level department: top-level trees share
//     nothing (its Queue's capability is its deserved);
//   - a Queue more than volcanoMaxDepth levels under root;
//   - a Queue whose capability exceeds its nearest ancestor's on a
//     resource (validateChildAgainstAncestor).
//
// Its children's deserved never exceed a department's (volcanoDeserved
// sums them) and no Queue deserves more than its capability.
func volcanoDepartments(cfg *config.Config, quotas *capacity.Quotas) hcl.Diagnostics {
	if len(cfg.Departments) == 0 {
		return nil
	}
	stack := cfg.Settings.Stack
	namespaces := map[string]*config.Tenant{}
	for _, t := range cfg.Tenants {
		namespaces[t.Namespace] = t
	}
	var diags hcl.Diagnostics
	for _, d := range cfg.Departments {
		name := volcanoQueueName(stack, d)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			diags = append(diags, errorAt(d.DeclRange, "Invalid Volcano Queue name",
				"%s becomes the Volcano Queue %q, whose name must be a DNS-1123 subdomain: %s. Rename the department.", d.Address, name, strings.Join(errs, "; ")))
		}
		if t := namespaces[name]; t != nil {
			diags = append(diags, errorAt(t.Range("namespace"), "Volcano Queue name taken",
				"%s's namespace %q is the name of %s's Volcano Queue (the stack's name and the department's), and a tenant's Queue is named after its namespace: the two would be one Queue. Rename the namespace or the department.", t.Address, name, d.Address))
		}
		if d.HasWeight {
			diags = append(diags, errorAt(d.Range("weight"), "Argument for another scheduler",
				"weight is read only by scheduler \"kueue\" (a Cohort's fair-sharing weight), and Volcano's capacity plugin, which enforces the tree, does not weigh Queues. Set scheduler = \"kueue\" in the gpuform block, or remove weight from %s.", d.Address))
		}
		diags = append(diags, volcanoDepartmentLimits(d)...)
		if volcanoDepth(d) == volcanoMaxDepth+1 {
			diags = append(diags, errorAt(d.Range("parent"), "Department tree too deep for Volcano",
				"%s's Queue would be %d levels under Volcano's root Queue, and Volcano's Queue webhook takes at most %d by default (--max-queue-depth). Flatten the tree.", d.Address, volcanoMaxDepth+1, volcanoMaxDepth))
		}
	}
	for _, t := range cfg.Tenants {
		if t.Department != nil && volcanoDepth(t.Department) == volcanoMaxDepth {
			diags = append(diags, errorAt(t.Range("department"), "Department tree too deep for Volcano",
				"%s's Queue would be %d levels under Volcano's root Queue, under %s, and Volcano's Queue webhook takes at most %d by default (--max-queue-depth). Put the tenant in a department nearer the top, or flatten the tree.", t.Address, volcanoMaxDepth+1, t.Department.Address, volcanoMaxDepth))
		}
	}
	if diags.HasErrors() {
		return diags // the capabilities below assume limits Volcano can express
	}
	return volcanoCapabilities(cfg, newOrgTree(quotas))
}

// volcanoDepartmentLimits refuses department d's lending limits, and its
// borrowing limits at the top of a tree.
func volcanoDepartmentLimits(d *config.Department) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, q := range d.Quotas {
		if q.HasAttr("lending_limit") {
			diags = append(diags, errorAt(q.Range("lending_limit"), "Lending limit under Volcano",
				"A Volcano Queue has no lending limit: what %s leaves idle the Queues beside it may use up to their capability, and Volcano reclaims it when %s's tenants want it back. Remove lending_limit, or set scheduler = \"kueue\".", d.Address, d.Address))
		}
		if d.Parent == nil && q.HasAttr("borrowing_limit") {
			diags = append(diags, errorAt(q.Range("borrowing_limit"), "Limit on a top-level department",
				"%s has no parent: its Queue's capability is what its tree holds, since top-level trees share nothing, so there is nothing to borrow. Set parent on %s, or remove borrowing_limit.", d.Address, d.Address))
		}
	}
	return diags
}

// volcanoDepth is how many levels under root department d's Queue is.
func volcanoDepth(d *config.Department) int {
	n := 0
	for ; d != nil; d = d.Parent {
		n++
	}
	return n
}

// volcanoCapabilities refuses a department's or tenant's Queue whose
// capability on a resource exceeds that of its nearest ancestor Queue
// that sets one: Volcano's webhook refuses it.
func volcanoCapabilities(cfg *config.Config, tree *orgTree) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, dq := range tree.quotas.Departments {
		d := dq.Department
		for r, n := range tree.volcanoCapability(d) {
			up, a := volcanoAncestorCapability(tree, d.Parent, r)
			if a == nil || n <= up {
				continue
			}
			rng := d.DeclRange
			for _, b := range dq.Blocks {
				for key := range b.Block.BorrowingLimit {
					if b.Resource(key) == r {
						rng = b.Block.KeyRange("borrowing_limit", key)
					}
				}
			}
			diags = append(diags, errorAt(rng, "Capability over the parent Queue's",
				"%s's Volcano Queue would have capability %d of %s (what its subtree deserves and its borrowing limit), above the %d of its ancestor %s's Queue, and Volcano's Queue webhook refuses a Queue whose capability exceeds its ancestor's. Lower the borrowing limit by %d, or raise the ancestor's.", d.Address, n, r, up, a.Address, n-up))
		}
	}
	for _, t := range cfg.Tenants {
		if t.Department == nil {
			continue
		}
		tq := tree.quotas.Of(t)
		limit := tq.Total()
		limit.Add(borrowBeyond(tq, tree.reach(t.Department)))
		for r, n := range limit {
			up, a := volcanoAncestorCapability(tree, t.Department, r)
			if a != nil && n > up {
				diags = append(diags, errorAt(t.Range("department"), "Capability over the parent Queue's",
					"%s's Volcano Queue would have capability %d of %s (its quota and what the tree lets it borrow, per pool), above the %d of %s's Queue, and Volcano's Queue webhook refuses a Queue whose capability exceeds its ancestor's; Volcano counts %s across pools. Give %s's borrowing limits on every pool that has %s, or none.", t.Address, n, r, up, a.Address, r, a.Address, r))
			}
		}
	}
	return diags
}

// volcanoAncestorCapability is the capability on resource r of the
// nearest of department d and its ancestors whose Queue sets one, and
// that department; nil when none does (root: no limit).
func volcanoAncestorCapability(tree *orgTree, d *config.Department, r string) (int64, *config.Department) {
	for ; d != nil; d = d.Parent {
		if n := tree.volcanoCapability(d)[r]; n > 0 {
			return n, d
		}
	}
	return 0, nil
}
