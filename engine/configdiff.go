package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

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

// blockTypeOrder is the order of block types in a config diff.
var blockTypeOrder = []string{"gpuform", "cluster", "variable", "priority", "mig_layout", "pool", "tenant", "model"}

// attrEntry is one attribute path of a flattened block.
type attrEntry struct {
	value     any
	sensitive bool
}

// flatBlock is a block reduced to its attribute paths.
type flatBlock struct {
	address, typ string
	attrs        map[string]attrEntry
	// order lists the paths in the order they were added (schema order).
	order []string
}

func (b *flatBlock) set(path string, v any, sensitive bool) {
	if _, ok := b.attrs[path]; !ok {
		b.order = append(b.order, path)
	}
	b.attrs[path] = attrEntry{value: v, sensitive: sensitive}
}

// setMap adds one path per key of a map attribute: slices["1g.10gb"].
func setMap[V any](b *flatBlock, path string, m map[string]V, sensitive bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.set(fmt.Sprintf("%s[%q]", path, k), m[k], sensitive)
	}
}

// ConfigDiff compares two configurations block by block and attribute by
// attribute: blocks are matched by address, so a renamed block is a removal
// and an addition. base or head may be nil (an empty configuration). The
// result is ordered by block type, then address.
func ConfigDiff(base, head *config.Config) []BlockChange {
	before, after := flattenConfig(base), flattenConfig(head)
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
			e := a.attrs[p]
			fields = append(fields, FieldDiff{Path: p, Op: FieldAdd, After: shown(e)})
		}
		out = append(out, BlockChange{Address: addr, Type: a.typ, Action: ActionCreate, Attributes: fields})
	}
	rank := map[string]int{}
	for i, t := range blockTypeOrder {
		rank[t] = i
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return rank[out[i].Type] < rank[out[j].Type]
		}
		return out[i].Address < out[j].Address
	})
	return out
}

// shown is an attribute's value as outputs may show it.
func shown(e attrEntry) any {
	if e.sensitive {
		return SensitiveValue
	}
	return e.value
}

// diffAttrs lists the attribute paths that differ between two versions of
// a block: head's paths in head's order, then those only base has.
func diffAttrs(b, a *flatBlock) []FieldDiff {
	var out []FieldDiff
	for _, p := range a.order {
		ae := a.attrs[p]
		be, ok := b.attrs[p]
		sensitive := ae.sensitive || (ok && be.sensitive)
		switch {
		case !ok:
			out = append(out, FieldDiff{Path: p, Op: FieldAdd, After: shown(ae)})
		case !reflect.DeepEqual(be.value, ae.value) || be.sensitive != ae.sensitive:
			f := FieldDiff{Path: p, Op: FieldChange, Before: be.value, After: ae.value}
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

// flattenConfig reduces every block of cfg to its attribute paths, by address.
func flattenConfig(cfg *config.Config) map[string]*flatBlock {
	out := map[string]*flatBlock{}
	if cfg == nil {
		return out
	}
	add := func(m *config.Meta, typ string) (*flatBlock, func(attr string) bool) {
		b := &flatBlock{address: m.Address, typ: typ, attrs: map[string]attrEntry{}}
		out[m.Address] = b
		return b, m.IsSensitive
	}
	if s := cfg.Settings; s != nil {
		meta := s.Meta
		if meta.Address == "" {
			meta.Address = "gpuform"
		}
		b, sens := add(&meta, "gpuform")
		b.set("stack", s.Stack, sens("stack"))
		b.set("scheduler", s.Scheduler, sens("scheduler"))
		b.set("mig_backend", s.MIGBackend, sens("mig_backend"))
		b.set("gpu_operator_namespace", s.GPUOperatorNamespace, sens("gpu_operator_namespace"))
	}
	if c := cfg.Cluster; c != nil && (c.Kubeconfig != "" || c.Context != "" || c.Simulated != "") {
		meta := c.Meta
		if meta.Address == "" {
			meta.Address = "cluster"
		}
		b, sens := add(&meta, "cluster")
		setNonZero(b, "kubeconfig", c.Kubeconfig, sens)
		setNonZero(b, "context", c.Context, sens)
		setNonZero(b, "simulated", c.Simulated, sens)
	}
	for _, v := range cfg.Variables {
		b, _ := add(&v.Meta, "variable")
		b.set("value", ctyValue(v.Value), v.Sensitive)
		b.set("sensitive", v.Sensitive, false)
		setNonZero(b, "description", v.Description, func(string) bool { return false })
	}
	for _, p := range cfg.Priorities {
		b, sens := add(&p.Meta, "priority")
		b.set("value", p.Value, sens("value"))
		b.set("preemption", p.Preemption, sens("preemption"))
		setNonZero(b, "description", p.Description, sens)
	}
	for _, l := range cfg.MIGLayouts {
		b, sens := add(&l.Meta, "mig_layout")
		b.set("gpu", l.GPU, sens("gpu"))
		setMap(b, "slices", l.Slices, sens("slices"))
		for i, d := range l.Devices {
			prefix := fmt.Sprintf("device[%d]", i)
			b.set(prefix+".indexes", intsAny(d.Indexes), d.IsSensitive("indexes") || sens("device"))
			b.set(prefix+".enabled", d.Enabled, d.IsSensitive("enabled") || sens("device"))
			setMap(b, prefix+".slices", d.Slices, d.IsSensitive("slices") || sens("device"))
		}
	}
	for _, p := range cfg.Pools {
		b, sens := add(&p.Meta, "pool")
		b.set("gpu", p.GPU, sens("gpu"))
		setMap(b, "node_selector", p.NodeSelector, sens("node_selector"))
		if p.MIGLayout != nil {
			b.set("mig_layout", p.MIGLayout.Address, false)
		}
		if p.TimeSlicing != nil {
			b.set("time_slicing.replicas", p.TimeSlicing.Replicas, p.TimeSlicing.IsSensitive("replicas"))
		}
		b.set("overcommit", p.Overcommit, sens("overcommit"))
		b.set("max_unavailable", p.MaxUnavailable, sens("max_unavailable"))
		setNonZero(b, "driver_version", p.DriverVersion, sens)
	}
	for _, t := range cfg.Tenants {
		b, sens := add(&t.Meta, "tenant")
		b.set("namespace", t.Namespace, sens("namespace"))
		setMap(b, "labels", t.Labels, sens("labels"))
		quotas := append([]*config.Quota(nil), t.Quotas...)
		sort.SliceStable(quotas, func(i, j int) bool { return quotas[i].PoolName < quotas[j].PoolName })
		for _, q := range quotas {
			prefix := fmt.Sprintf("quota[%q]", q.PoolName)
			setMap(b, prefix+".slices", q.Slices, q.IsSensitive("slices"))
			if q.GPUs != 0 || len(q.Slices) == 0 {
				b.set(prefix+".gpus", q.GPUs, q.IsSensitive("gpus"))
			}
			setMap(b, prefix+".borrowing_limit", q.BorrowingLimit, q.IsSensitive("borrowing_limit"))
			setMap(b, prefix+".lending_limit", q.LendingLimit, q.IsSensitive("lending_limit"))
		}
		setNonZero(b, "cohort", t.Cohort, sens)
		b.set("weight", t.Weight, sens("weight"))
		b.set("reclaimable", t.Reclaimable, sens("reclaimable"))
		setNonZero(b, "cpu", t.CPU, sens)
		setNonZero(b, "memory", t.Memory, sens)
		if t.Pods != 0 {
			b.set("pods", t.Pods, sens("pods"))
		}
		if len(t.Priorities) > 0 {
			addrs := make([]any, len(t.Priorities))
			for i, p := range t.Priorities {
				addrs[i] = p.Address
			}
			b.set("priorities", addrs, false)
		}
		if t.DefaultPriority != nil {
			b.set("default_priority", t.DefaultPriority.Address, false)
		}
		setList(b, "admins", t.Admins, sens)
		setList(b, "editors", t.Editors, sens)
		setList(b, "viewers", t.Viewers, sens)
		b.set("protect", t.Protect, sens("protect"))
	}
	for _, m := range cfg.Models {
		b, sens := add(&m.Meta, "model")
		if m.Tenant != nil {
			b.set("tenant", m.Tenant.Address, false)
		}
		if m.Pool != nil {
			b.set("pool", m.Pool.Address, false)
		}
		setNonZero(b, "slice", m.Slice, sens)
		if m.GPUs != 0 {
			b.set("gpus", m.GPUs, sens("gpus"))
		}
		setNonZero(b, "format", m.Format, sens)
		setNonZero(b, "runtime", m.Runtime, sens)
		setNonZero(b, "deployment_mode", m.DeploymentMode, sens)
		setNonZero(b, "storage_uri", m.StorageURI, sens)
		b.set("replicas.min", m.MinReplicas, sens("replicas"))
		b.set("replicas.max", m.MaxReplicas, sens("replicas"))
		if m.Priority != nil {
			b.set("priority", m.Priority.Address, false)
		}
	}
	return out
}

func setNonZero(b *flatBlock, attr, v string, sens func(string) bool) {
	if v != "" {
		b.set(attr, v, sens(attr))
	}
}

func setList(b *flatBlock, attr string, l []string, sens func(string) bool) {
	if len(l) == 0 {
		return
	}
	v := make([]any, len(l))
	for i, s := range l {
		v[i] = s
	}
	b.set(attr, v, sens(attr))
}

func intsAny(l []int) []any {
	v := make([]any, len(l))
	for i, n := range l {
		v[i] = n
	}
	return v
}

// ctyValue converts a variable's value to plain Go (via JSON) for
// comparison and display; unknown or unusable values become nil.
func ctyValue(v cty.Value) any {
	if v == cty.NilVal || v == cty.DynamicVal {
		return nil
	}
	v, _ = v.UnmarkDeep()
	if !v.IsWhollyKnown() {
		return nil
	}
	if v.IsNull() {
		return nil
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}
