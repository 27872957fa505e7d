package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// Row is one pool's figures for one resource (GPUs or a MIG profile).
type Row struct {
	// Pool is the pool's name.
	Pool string `json:"pool"`
	// Resource is the extended resource: nvidia.com/gpu or a MIG profile's.
	Resource string `json:"resource"`
	// Total is nodes x GPUs per node x (slices per GPU, or time-slicing replicas).
	Total int `json:"total"`
	// Quota is what tenants' quotas claim; Requested what models ask for
	// (min replicas); Free is Total - Quota (negative when over-committed).
	Quota     int `json:"quota"`
	Requested int `json:"requested"`
	Free      int `json:"free"`
	// Limit is Total x the pool's overcommit.
	Limit int `json:"limit"`
	// TotalBefore is what the pool's nodes offer now (their current MIG
	// instances); QuotaBefore what the stack's applied ResourceQuotas claim,
	// or -1 when more than one pool offers the resource.
	TotalBefore int `json:"total_before"`
	QuotaBefore int `json:"quota_before"`
}

// Report is the GPU capacity of every pool, from the nodes the pools select.
type Report struct {
	// Rows are the pools' figures, in pool order, by resource name.
	Rows []Row `json:"rows"`
	// Stack says which GPU stack offers the nodes' GPUs (StackOf); empty
	// when the configuration has no DRA pool and the cluster does not run
	// the DRA stack.
	Stack string `json:"stack,omitempty"`
	// Kueue says, under scheduler = "kueue" with a ClusterQueue quota on a
	// DRA pool, whether Kueue's configuration maps the pools' DeviceClasses
	// (KueueDRA); empty otherwise.
	Kueue string `json:"kueue,omitempty"`
}

// CheckFrom computes each pool's capacity from the live nodes and reports,
// as diagnostics on the configuration: a pool that selects no node, nodes
// whose GPUs are not the pool's model, drivers outside the pool's
// driver_version, and quotas beyond capacity x overcommit. With the
// quota the stack's applied objects claim, by resource (nil for none), it
// also gives the figures before the change: the nodes' current MIG
// instances and that quota. A DRA pool's GPUs and devices are those NVIDIA's
// DRA driver publishes for its nodes (dra, checkDRAMembers).
func CheckFrom(cfg *config.Config, nodes []*unstructured.Unstructured, dra DRAInventory, quotaNow Counts, cat *mig.Catalog) (*Report, hcl.Diagnostics) {
	offeredBy := map[string]int{}
	for _, p := range cfg.Pools {
		for r := range draTotals(cfg.Settings.Stack, p, poolTotals(p, map[string]int{"": 1})) {
			offeredBy[r]++
		}
	}
	quotas := QuotasOf(cfg)
	var diags hcl.Diagnostics
	out := &Report{Stack: StackOf(cfg, nodes, dra)}
	for _, p := range cfg.Pools {
		var members []NodeInventory
		for _, n := range nodes {
			if SelectsNode(p.NodeSelector, n) {
				members = append(members, InventoryOf(n, cat))
			}
		}
		if len(members) == 0 {
			diags = append(diags, problem(p.Range("node_selector"), "Pool selects no node", "Pool %s selects nodes labelled %s, and no node of the cluster has those labels. Label the GPU nodes, or fix node_selector.", p.Name, SelectorString(p.NodeSelector)))
			continue
		}
		gpusPerNode, before, mdiags := checkMembers(p, members, cat)
		if d := pluginWithoutResources(p, nodes, dra); d != nil {
			diags = append(diags, d)
			continue
		}
		if p.DRA() {
			gpusPerNode, before, mdiags = checkDRAMembers(cfg.Settings.Stack, p, members, dra, cat)
			if d := draOutside(cfg.Settings.Stack, p, nodes, dra, cat); d != nil {
				mdiags = append(mdiags, d)
			}
			if d := draDynamicMIG(p, members, dra); d != nil {
				mdiags = append(mdiags, d)
			}
		}
		diags = append(diags, mdiags...)
		if gpusPerNode == nil {
			continue
		}
		rows, rdiags := poolRows(cfg, quotas, p, gpusPerNode, before)
		diags = append(diags, rdiags...)
		for _, row := range rows {
			row.QuotaBefore = int(quotaNow[row.Resource])
			if offeredBy[row.Resource] > 1 {
				row.QuotaBefore = -1
			}
			out.Rows = append(out.Rows, row)
		}
	}
	var kdiags hcl.Diagnostics
	out.Kueue, kdiags = KueueDRA(cfg, dra.Kueue, quotas)
	diags = append(diags, VolcanoTree(cfg, dra.Volcano)...)
	return out, append(diags, kdiags...)
}

// problem is an error diagnostic at rng.
func problem(rng hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}
}

// checkMembers checks the nodes pool p selects against it (their GPU model
// and driver) and returns their GPUs by node and what they offer now by
// resource.
func checkMembers(p *config.Pool, members []NodeInventory, cat *mig.Catalog) (gpusPerNode, before map[string]int, diags hcl.Diagnostics) {
	want := cat.Key(p.GPU)
	gpusPerNode, before = map[string]int{}, map[string]int{}
	var wrong, offDriver []string
	for _, m := range members {
		switch {
		case p.MIGLayout != nil:
			for prof, n := range m.MIG {
				before[mig.Resource(prof)] += n
			}
		case p.Shared() != nil:
			before[GPUResource(p)] += m.GPUs * p.Shared().Replicas
		default:
			before[mig.ResourceGPU] += m.GPUs
		}
		switch {
		case m.Source == SourceNone:
			wrong = append(wrong, m.Node+" (no GPUs reported)")
		case m.Source != SourceCapacity && m.Model != want:
			wrong = append(wrong, fmt.Sprintf("%s (%s)", m.Node, m.Model))
		}
		if p.DriverVersion != "" && m.Driver != "" {
			if ok, err := config.SatisfiesVersion(p.DriverVersion, m.Driver); err == nil && !ok {
				offDriver = append(offDriver, fmt.Sprintf("%s (%s)", m.Node, m.Driver))
			}
		}
		gpusPerNode[m.Node] = m.GPUs
	}
	if len(wrong) > 0 {
		diags = append(diags, problem(p.Range("gpu"), "Nodes with other GPUs", "Pool %s is for %s GPUs, but it selects %s. Narrow node_selector, or set gpu to what the nodes have.", p.Name, want, strings.Join(wrong, ", ")))
	}
	if len(offDriver) > 0 {
		diags = append(diags, driverProblem(p, offDriver))
	}
	return gpusPerNode, before, diags
}

// driverProblem is the error for the nodes (with their drivers) outside
// pool p's driver_version: a minimum says too old, a maximum too new, an
// exact version (no operator, or =) that they are not the pinned one,
// whether older or newer.
func driverProblem(p *config.Pool, nodes []string) *hcl.Diagnostic {
	op, _, _ := config.ParseVersionConstraint(p.DriverVersion)
	list := strings.Join(nodes, ", ")
	switch op {
	case ">=", ">":
		return problem(p.Range("driver_version"), "Driver too old", "Pool %s needs driver %s, but %s. Upgrade the driver on those nodes or relax driver_version.", p.Name, p.DriverVersion, list)
	case "<=", "<":
		return problem(p.Range("driver_version"), "Driver too new", "Pool %s needs driver %s, but %s. Install an older driver on those nodes or relax driver_version.", p.Name, p.DriverVersion, list)
	}
	return problem(p.Range("driver_version"), "Driver not the pinned version", "Pool %s pins driver %s, but %s. Install that version on those nodes (pin_drivers = true does it through the GPU Operator), or give a minimum such as \">= %s\" in driver_version.", p.Name, p.DriverVersion, list, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p.DriverVersion), "=")))
}

// poolRows is pool p's row per resource (QuotaBefore left to the caller),
// its quota column from the tenants' quotas, with an error for each resource its quotas claim beyond the limit.
func poolRows(cfg *config.Config, quotas *Quotas, p *config.Pool, gpusPerNode, before map[string]int) ([]Row, hcl.Diagnostics) {
	total := draTotals(cfg.Settings.Stack, p, poolTotals(p, gpusPerNode))
	quota, requested := map[string]int{}, map[string]int{}
	// A department's own quota is promised on the pool as much as a
	// tenant's: its members share it on top of their own.
	blocks := make([][]BlockQuota, 0, len(quotas.Tenants)+len(quotas.Departments))
	for _, tq := range quotas.Tenants {
		blocks = append(blocks, tq.Blocks)
	}
	for _, dq := range quotas.Departments {
		blocks = append(blocks, dq.Blocks)
	}
	for _, bs := range blocks {
		for _, b := range bs {
			if b.Block.Pool != p {
				continue
			}
			for r, n := range b.Nominal {
				quota[r] += int(n)
			}
		}
	}
	for _, m := range cfg.Models {
		if m.Pool != p {
			continue
		}
		if m.Slice != "" {
			requested[mig.Resource(m.Slice)] += m.MinReplicas
		} else {
			requested[GPUResource(p)] += m.MinReplicas * m.GPUs
		}
	}
	requested = draTotals(cfg.Settings.Stack, p, requested) // a DRA pool's models ask for its classes' devices
	resources := map[string]bool{}
	for _, m := range []map[string]int{total, quota, requested} {
		for r := range m {
			resources[r] = true
		}
	}
	var rows []Row
	var diags hcl.Diagnostics
	for _, r := range slices.Sorted(maps.Keys(resources)) {
		row := Row{Pool: p.Name, Resource: r, Total: total[r], Quota: quota[r], Requested: requested[r], TotalBefore: before[r]}
		row.Free = row.Total - row.Quota
		row.Limit = int(float64(row.Total)*p.Overcommit + 1e-9)
		rows = append(rows, row)
		if row.Quota > row.Limit {
			diags = append(diags, problem(quotaRange(cfg, p, r), "Quotas exceed the pool's capacity", "Tenants' quotas on pool %s claim %d of %s, but the pool has %d (%s) and overcommit %.2g allows %d. Lower the quotas, add nodes, or raise overcommit.",
				p.Name, row.Quota, r, row.Total, totalExplained(p, gpusPerNode, r), p.Overcommit, row.Limit))
		}
	}
	return rows, diags
}

// GPUResource is the extended resource that pool p's whole GPUs (or their
// time-slicing or MPS replicas) are advertised as: nvidia.com/gpu.shared
// for a shared pool with rename_by_default (the device plugin's
// renameByDefault), so that its replicas never add up with another pool's
// whole GPUs in one quota; nvidia.com/gpu otherwise (and for a nil pool).
func GPUResource(p *config.Pool) string {
	if p != nil {
		if s := p.Shared(); s != nil && s.RenameByDefault {
			return mig.ResourceGPUShared
		}
	}
	return mig.ResourceGPU
}

// poolTotals is nodes x GPUs x slices (or replicas) per resource.
func poolTotals(p *config.Pool, gpusPerNode map[string]int) map[string]int {
	total := map[string]int{}
	for _, gpus := range gpusPerNode {
		switch {
		case p.MIGLayout != nil && len(p.MIGLayout.Devices) == 0:
			for prof, n := range p.MIGLayout.Slices {
				total[mig.Resource(prof)] += gpus * n
			}
		case p.MIGLayout != nil:
			for _, g := range p.MIGLayout.Devices {
				present := 0
				for _, i := range g.Indexes {
					if i < gpus {
						present++
					}
				}
				if !g.Enabled {
					total[mig.ResourceGPU] += present
					continue
				}
				for prof, n := range g.Slices {
					total[mig.Resource(prof)] += present * n
				}
			}
		case p.Shared() != nil:
			total[GPUResource(p)] += gpus * p.Shared().Replicas
		default:
			total[mig.ResourceGPU] += gpus
		}
	}
	return total
}

// totalExplained says how a pool's total of r came about, for messages.
func totalExplained(p *config.Pool, gpusPerNode map[string]int, r string) string {
	gpus := 0
	for _, g := range gpusPerNode {
		gpus += g
	}
	switch {
	case p.MIGLayout != nil && len(p.MIGLayout.Devices) == 0:
		for prof, n := range p.MIGLayout.Slices {
			if mig.Resource(prof) == r {
				return fmt.Sprintf("%s, %s x %d %s each", Count(len(gpusPerNode), "node"), Count(gpus, "GPU"), n, prof)
			}
		}
	case p.TimeSlicing != nil:
		return fmt.Sprintf("%s, %s x %d time-slicing replicas", Count(len(gpusPerNode), "node"), Count(gpus, "GPU"), p.TimeSlicing.Replicas)
	case p.MPS != nil:
		return fmt.Sprintf("%s, %s x %d MPS replicas", Count(len(gpusPerNode), "node"), Count(gpus, "GPU"), p.MPS.Replicas)
	}
	return fmt.Sprintf("%s, %s", Count(len(gpusPerNode), "node"), Count(gpus, "GPU"))
}

// Count renders n things, with a plural s: "1 node", "2 GPUs".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// quotaRange points at the first quota on pool p that claims resource r.
func quotaRange(cfg *config.Config, p *config.Pool, r string) hcl.Range {
	for _, t := range cfg.Tenants {
		for _, q := range t.Quotas {
			if q.Pool != p {
				continue
			}
			for prof := range q.Slices {
				if mig.Resource(prof) == r {
					return q.KeyRange("slices", prof)
				}
			}
			if r == GPUResource(p) && q.GPUs > 0 {
				return q.Range("gpus")
			}
		}
	}
	return p.DeclRange
}

// SelectorString renders a node selector as k=v,k=v in key order: the same
// selector always reads the same.
func SelectorString(sel map[string]string) string {
	keys := slices.Sorted(maps.Keys(sel))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sel[k]
	}
	return strings.Join(parts, ",")
}
