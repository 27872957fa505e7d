package compile

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// Limits of Kueue's ClusterQueue that gpuform's configuration can reach,
// as Kueue v0.17.0 (kueue.x-k8s.io/v1beta2) imposes them: its CRD
// (config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml, from
// apis/kueue/v1beta2/clusterqueue_types.go) and its ClusterQueue webhook
// (pkg/webhooks/clusterqueue_webhook.go).
const (
	// spec.resourceGroups[*].flavors: maxItems 64 (CRD). gpuform writes one
	// resource group with a flavor per quota block.
	kueueMaxFlavors = 64
	// Configuration.resources.deviceClassMappings: at most 16 mappings
	// (pkg/config/validation.go); gpuform maps each DeviceClass of the
	// stack to its own resource.
	kueueMaxDeviceClasses = 16
	// spec.resourceGroups[*].coveredResources: maxItems 64 (CRD).
	kueueMaxCoveredResources = 64
	// validateFlavorResourceCombinations: "number of flavor-resource
	// combinations in a resourceGroup must be ≤ 512" (webhook). Each flavor
	// lists every covered resource, so this is flavors × covered resources.
	kueueMaxFlavorResources = 512
)

// Validate reports what Kueue would refuse of the stack's ClusterQueues
// and of the labels its models carry:
//   - a cohort that is not a DNS-1123 subdomain: spec.cohortName has
//     pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
//     and maxLength 253 (CRD);
//   - borrowing or lending limits without a cohort: validateLimit, "must
//     be nil when cohort is empty" (webhook; the CRD's CEL rule
//     "borrowingLimit must be nil when cohort is empty" too);
//   - a lending limit above the quota: validateLendingLimit, "must be less
//     than or equal to the nominalQuota" (webhook);
//   - more flavors, covered resources or flavor-resource combinations than
//     the limits above;
//   - more taints on a pool than a ResourceFlavor's nodeTaints take
//     (kueueMaxTaints);
//   - a priority name that a model carries as the label
//     kueue.x-k8s.io/priority-class but that is no valid label value (at
//     most 63 characters): the API server refuses the InferenceService.
func (k kueue) Validate(cfg *config.Config, quotas *capacity.Quotas) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, tq := range quotas.Tenants {
		diags = append(diags, kueueCohort(tq.Tenant)...)
		diags = append(diags, kueueLimits(tq)...)
		diags = append(diags, kueueSizes(tq)...)
	}
	diags = append(diags, kueueTaints(cfg)...)
	return append(diags, kueuePriorityLabels(cfg)...)
}

func errorAt(rng hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}
}

// kueueCohort checks the tenant's cohort against spec.cohortName's pattern.
func kueueCohort(t *config.Tenant) hcl.Diagnostics {
	if t.Cohort == "" {
		return nil
	}
	if len(validation.IsDNS1123Subdomain(t.Cohort)) > 0 {
		return hcl.Diagnostics{errorAt(t.Range("cohort"), "Invalid Kueue cohort",
			"The cohort %q becomes the ClusterQueue's spec.cohortName, which Kueue requires to be a DNS-1123 subdomain: lower case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters.",
			t.Cohort)}
	}
	return nil
}

// kueueLimits checks borrowing and lending limits against the tenant's
// cohort and each quota block's nominal quota.
func kueueLimits(tq *capacity.TenantQuota) hcl.Diagnostics {
	var diags hcl.Diagnostics
	t := tq.Tenant
	for _, b := range tq.Blocks {
		q := b.Block
		if t.Cohort == "" {
			for _, attr := range []string{"borrowing_limit", "lending_limit"} {
				if q.HasAttr(attr) {
					diags = append(diags, errorAt(q.Range(attr), "Limit without a cohort",
						"%s has no cohort, and Kueue refuses borrowing and lending limits on a ClusterQueue without one (\"must be nil when cohort is empty\"): there is no one to borrow from or lend to. Set cohort on %s, or remove %s.",
						t.Address, t.Address, attr))
				}
			}
		}
		for key, n := range q.LendingLimit {
			quota, covered := b.Nominal[b.Resource(key)]
			if covered && int64(n) > quota {
				diags = append(diags, errorAt(q.KeyRange("lending_limit", key), "Lending limit over the quota",
					"lending_limit[%q] is %d, more than this quota block's %d; Kueue refuses a lendingLimit above the nominalQuota (\"must be less than or equal to the nominalQuota\"). A tenant can lend at most its quota.",
					key, n, quota))
			}
		}
	}
	return diags
}

// kueueSizes checks the tenant's ClusterQueue, as Tenant writes it,
// against the CRD's maxItems and the webhook's limit on flavor-resource
// combinations.
func kueueSizes(tq *capacity.TenantQuota) hcl.Diagnostics {
	t := tq.Tenant
	if len(t.Quotas) == 0 {
		return nil
	}
	groups, _ := clusterQueueSpec(t, tq)["resourceGroups"].([]any)
	var diags hcl.Diagnostics
	last := t.Quotas[len(t.Quotas)-1]
	for _, g := range groups {
		rg, _ := g.(map[string]any)
		flavors, _ := rg["flavors"].([]any)
		covered, _ := rg["coveredResources"].([]any)
		switch {
		case len(flavors) > kueueMaxFlavors:
			diags = append(diags, errorAt(t.Quotas[kueueMaxFlavors].DeclRange, "Too many quota blocks for Kueue",
				"%s has %d quota blocks, each a flavor of its ClusterQueue, and Kueue takes at most %d flavors in a resource group (maxItems); split the tenant, or give it quotas on fewer pools.",
				t.Address, len(flavors), kueueMaxFlavors))
		case len(covered) > kueueMaxCoveredResources:
			diags = append(diags, errorAt(last.DeclRange, "Too many resources for Kueue",
				"%s's ClusterQueue would cover %d resources (the GPUs and MIG profiles of its quota blocks), and Kueue takes at most %d (maxItems); give it quotas on fewer profiles.",
				t.Address, len(covered), kueueMaxCoveredResources))
		case len(flavors)*len(covered) > kueueMaxFlavorResources:
			diags = append(diags, errorAt(last.DeclRange, "Too many flavor-resource combinations for Kueue",
				"%s's ClusterQueue would have %d flavors (quota blocks) × %d resources (every resource of any of its quota blocks) = %d flavor-resource combinations, and Kueue refuses more than %d in a resource group; give it quotas on fewer pools or fewer MIG profiles.",
				t.Address, len(flavors), len(covered), len(flavors)*len(covered), kueueMaxFlavorResources))
		}
	}
	return diags
}

// kueuePriorityLabels checks the priorities that become the label
// kueue.x-k8s.io/priority-class of a model (its own, or its tenant's
// default): a label value has at most 63 characters, where a
// PriorityClass name may have 253.
func kueuePriorityLabels(cfg *config.Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	reported := map[*config.Priority]bool{}
	for _, m := range cfg.Models {
		p := m.Priority
		if p == nil && m.Tenant != nil {
			p = m.Tenant.DefaultPriority
		}
		if p == nil || reported[p] {
			continue
		}
		if errs := validation.IsValidLabelValue(p.Name); len(errs) > 0 {
			reported[p] = true
			diags = append(diags, errorAt(p.DeclRange, "Priority name too long for a label",
				"With scheduler = \"kueue\", %s carries the priority's name as the label kueue.x-k8s.io/priority-class, and %q is not a valid label value: %s. Use a name of at most 63 characters.",
				m.Address, p.Name, strings.Join(errs, "; ")))
		}
	}
	return diags
}
