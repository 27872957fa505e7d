package capacity

import (
	"github.com/gpuform/gpuform/config"
)

// DepartmentQuota is a department's own GPU quota: what its tenants and
// sub-departments share on top of their own quotas, by pool.
type DepartmentQuota struct {
	// Department is the department; Blocks its quota blocks, in order.
	Department *config.Department
	Blocks     []BlockQuota
}

// departments computes the own quota of every department of cfg into qs,
// with the same block arithmetic as a tenant's.
func (qs *Quotas) departments(cfg *config.Config) {
	stack := cfg.Settings.Stack
	qs.byDepartment = make(map[*config.Department]*DepartmentQuota, len(cfg.Departments))
	for _, d := range cfg.Departments {
		dq := &DepartmentQuota{Department: d, Blocks: blocksOf(stack, d.Quotas)}
		qs.Departments = append(qs.Departments, dq)
		qs.byDepartment[d] = dq
	}
}

// OfDepartment is department d's own quota; an empty one for a department
// the configuration does not hold.
func (qs *Quotas) OfDepartment(d *config.Department) *DepartmentQuota {
	if dq, ok := qs.byDepartment[d]; ok {
		return dq
	}
	return &DepartmentQuota{Department: d}
}

// Covered lists, in order, the resources any of the department's own
// blocks claims.
func (dq *DepartmentQuota) Covered() []string {
	return (&TenantQuota{Blocks: dq.Blocks}).Covered()
}
