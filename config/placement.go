package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The placement arguments of pools, tenants and models.
const (
	argClusters        = "clusters"
	argClusterSelector = "cluster_selector"
	argDispatch        = "dispatch"
)

// placement is where a pool, tenant or model was placed, as written: the
// members its clusters argument names, or the labels its cluster_selector
// matches. Neither written is the default placement (see place).
type placement struct {
	names    []string
	selector map[string]string
	written  bool
}

// decodePlacement reads the placement arguments of one instance. Each
// name of a literal clusters list gets its own range (Meta.KeyRange), so
// that an unknown name is reported where it is written.
func (l *loader) decodePlacement(d *decoder, content *hcl.BodyContent) placement {
	var p placement
	if !d.has(argClusters) && !d.has(argClusterSelector) {
		return p
	}
	if !l.fleet {
		for _, a := range []string{argClusters, argClusterSelector} {
			if d.has(a) {
				d.fail("Placement outside a fleet", fmt.Sprintf("%s places a %s on members of a fleet, which this configuration is not: it has no named cluster blocks (cluster \"NAME\" { ... }).", a, d.meta.Type), d.meta.Range(a))
			}
		}
		return p
	}
	if d.has(argClusters) && d.has(argClusterSelector) {
		d.fail("Conflicting placement", "A block is placed either by name (clusters) or by label (cluster_selector), not both.", d.meta.Range(argClusterSelector))
		return p
	}
	p.written = true
	p.names = d.strList(argClusters)
	p.selector = d.strMap(argClusterSelector)
	if a, ok := content.Attributes[argClusters]; ok {
		if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok && len(tuple.Exprs) == len(p.names) {
			for i, e := range tuple.Exprs {
				d.meta.ranges.set(l.insts.keyName(argClusters, p.names[i]), e.Range())
			}
		}
	}
	return p
}

// decodeDispatch reads a tenant's dispatch argument.
func (l *loader) decodeDispatch(d *decoder) string {
	if !d.has(argDispatch) {
		return ""
	}
	if !l.fleet {
		d.fail("Placement outside a fleet", "dispatch = \"multikueue\" sends a tenant's jobs from the fleet's manager cluster to its workers; this configuration has no named cluster blocks (cluster \"NAME\" { ... }).", d.meta.Range(argDispatch))
		return ""
	}
	return d.enum(argDispatch, "", DispatchMultiKueue)
}

// memberSet is a set of fleet members by name.
type memberSet map[string]bool

// place resolves the placement of every pool, tenant and model of a fleet
// and keeps, in the configuration, only what is placed on the member it
// is evaluated for. The defaults (docs/language.md, placement):
//   - a pool without placement is on every member;
//   - a tenant is on every member where a pool it has a quota in is
//     (every member when it has no quota), narrowed by its own placement,
//     and also on the manager when its dispatch is "multikueue";
//   - a model is where both its tenant and its pool are; a model placed
//     where either is not is an error;
//   - a department is on every member that holds a tenant under it;
//   - everything else is on every member.
//
// A kept tenant's (and department's) quotas in a pool not on the member
// are dropped, and so are the departments with no tenant on the member.
func (l *loader) place() {
	if l.member == nil {
		return
	}
	cfg := l.cfg
	poolOn := map[string]memberSet{}
	for _, p := range cfg.Pools {
		on := l.resolvePlacement(&p.Meta, p.place, nil)
		poolOn[p.Name] = on
		p.Clusters = l.fleetOrder(on)
	}
	tenantOn := map[*Tenant]memberSet{}
	for _, t := range cfg.Tenants {
		on := l.placeTenant(t, poolOn)
		tenantOn[t] = on
		t.Clusters = l.fleetOrder(on)
	}
	for _, m := range cfg.Models {
		m.Clusters = l.fleetOrder(l.placeModel(m, poolOn, tenantOn))
	}
	l.keepMember(poolOn)
}

// placeTenant resolves a tenant's placement: where its pools are, narrowed
// by its own placement, plus the manager for MultiKueue dispatch.
func (l *loader) placeTenant(t *Tenant, poolOn map[string]memberSet) memberSet {
	var pools memberSet
	for _, q := range t.Quotas {
		if on, ok := poolOn[q.PoolName]; ok {
			if pools == nil {
				pools = memberSet{}
			}
			maps.Copy(pools, on)
		}
	}
	on := l.resolvePlacement(&t.Meta, t.place, pools)
	if t.place.written && pools != nil {
		for _, name := range l.fleetOrder(on) {
			if pools[name] {
				continue
			}
			delete(on, name)
			if t.HasAttr(argClusters) {
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Tenant placed where none of its pools is",
					Detail:   fmt.Sprintf("%s is placed on cluster %q, where no pool it has a quota in is placed. A tenant's placement narrows where its pools are; it cannot add a cluster.", t.Address, name),
					Subject:  t.KeyRange(argClusters, name).Ptr(),
				})
			}
		}
	}
	if t.Dispatch == DispatchMultiKueue {
		manager := l.manager()
		if manager == nil {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No manager cluster",
				Detail:   "dispatch = \"multikueue\" submits the tenant's jobs on the fleet's MultiKueue manager, and no cluster block has role = \"manager\".",
				Subject:  t.Range(argDispatch).Ptr(),
			})
		} else {
			on[manager.Name] = true
		}
	}
	return on
}

// placeModel resolves a model's placement: where its tenant and its pool
// both are, or its own placement, which must be within that.
func (l *loader) placeModel(m *Model, poolOn map[string]memberSet, tenantOn map[*Tenant]memberSet) memberSet {
	if m.Tenant == nil || m.Pool == nil {
		return memberSet{} // the unknown reference is reported by validation
	}
	both := memberSet{}
	for name := range poolOn[m.Pool.Name] {
		if tenantOn[m.Tenant][name] {
			both[name] = true
		}
	}
	if !m.place.written {
		return both
	}
	on := l.resolvePlacement(&m.Meta, m.place, nil)
	for _, name := range l.fleetOrder(on) {
		if both[name] {
			continue
		}
		var missing []string
		if !poolOn[m.Pool.Name][name] {
			missing = append(missing, "pool "+m.Pool.Name)
		}
		if !tenantOn[m.Tenant][name] {
			missing = append(missing, "tenant "+m.Tenant.Name)
		}
		rng := m.Range(argClusterSelector)
		if m.HasAttr(argClusters) {
			rng = m.KeyRange(argClusters, name)
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Model placed where its pool or tenant is not",
			Detail:   fmt.Sprintf("%s is placed on cluster %q, where its %s is not placed. A model runs where both its tenant and its pool are.", m.Address, name, joinAnd(missing)),
			Subject:  rng.Ptr(),
		})
		delete(on, name)
	}
	return on
}

// resolvePlacement returns the members p places a block on: the names,
// the members whose labels match the selector, or, when p is not written,
// every member (pools and models) or def when not nil (a tenant's pools).
// An unknown name is an error at the name; a selector that matches no
// member is an error at the selector.
func (l *loader) resolvePlacement(meta *Meta, p placement, def memberSet) memberSet {
	on := memberSet{}
	switch {
	case !p.written && def != nil:
		maps.Copy(on, def)
	case !p.written:
		for _, c := range l.cfg.Fleet {
			on[c.Name] = true
		}
	case meta.HasAttr(argClusters):
		for _, name := range p.names {
			if l.cfg.Member(name) == nil {
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Unknown cluster",
					Detail:   fmt.Sprintf("%s is placed on cluster %q, which is not declared; the fleet's clusters are %s.", meta.Address, name, quoteList(l.cfg.FleetNames())),
					Subject:  meta.KeyRange(argClusters, name).Ptr(),
				})
				continue
			}
			on[name] = true
		}
	default:
		for _, c := range l.cfg.Fleet {
			if matches(c.Labels, p.selector) {
				on[c.Name] = true
			}
		}
		if len(on) == 0 {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Placement matches no cluster",
				Detail:   fmt.Sprintf("No cluster of the fleet has every label of %s's cluster_selector.", meta.Address),
				Subject:  meta.Range(argClusterSelector).Ptr(),
			})
		}
	}
	return on
}

// keepMember keeps in the configuration only the pools, tenants and models
// placed on the member it is evaluated for, and drops the quotas, of the
// tenants and departments, in pools that are not on it.
func (l *loader) keepMember(poolOn map[string]memberSet) {
	cfg, here := l.cfg, l.member.Name
	offHere := func(q *Quota) bool {
		on, ok := poolOn[q.PoolName]
		return ok && !on[here] // an unknown pool is left for validation to report
	}
	anywhere := departmentsHolding(cfg.Tenants)
	cfg.Pools = slices.DeleteFunc(cfg.Pools, func(p *Pool) bool { return !slices.Contains(p.Clusters, here) })
	cfg.Tenants = slices.DeleteFunc(cfg.Tenants, func(t *Tenant) bool { return !slices.Contains(t.Clusters, here) })
	cfg.Models = slices.DeleteFunc(cfg.Models, func(m *Model) bool { return !slices.Contains(m.Clusters, here) })
	for _, t := range cfg.Tenants {
		t.Quotas = slices.DeleteFunc(t.Quotas, offHere)
	}
	// A department is on every member that holds a tenant under it; one
	// with no tenant anywhere is kept, for validation to report.
	onHere := departmentsHolding(cfg.Tenants)
	cfg.Departments = slices.DeleteFunc(cfg.Departments, func(d *Department) bool { return anywhere[d] && !onHere[d] })
	for _, d := range cfg.Departments {
		d.Quotas = slices.DeleteFunc(d.Quotas, offHere)
	}
}

// departmentsHolding is the set of departments with one of tenants under
// them, at any depth.
func departmentsHolding(tenants []*Tenant) map[*Department]bool {
	out := map[*Department]bool{}
	for _, t := range tenants {
		for d := t.Department; d != nil && !out[d]; d = d.Parent {
			out[d] = true
		}
	}
	return out
}

// manager is the fleet's manager cluster, or nil.
func (l *loader) manager() *Cluster {
	for _, c := range l.cfg.Fleet {
		if c.Role == RoleManager {
			return c
		}
	}
	return nil
}

// fleetOrder lists the members of set in fleet order.
func (l *loader) fleetOrder(set memberSet) []string {
	var out []string
	for _, c := range l.cfg.Fleet {
		if set[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}

// matches reports whether labels has every label of selector.
func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// joinAnd joins words with "and".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return fmt.Sprintf("%s and %s", words[0], words[1])
}
