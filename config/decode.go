package config

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// instances collects the typed instances as they are evaluated and indexes
// them by address so that later blocks can link their references. Blocks
// evaluated concurrently record and look up through its lock.
type instances struct {
	mu         sync.Mutex
	priorities map[string]*Priority
	layouts    map[string]*MIGLayout
	pools      map[string]*Pool
	tenants    map[string]*Tenant
	depts      map[string]*Department
	models     map[string]*Model
	alerts     map[string]*Alert
	cfg        Config
	// names are the names of ranges made so far, attributes' and keys'
	// (attr, NUL, key), so that each is one string however many instances
	// write it: 20,000 models' replicas = { min, max } share three.
	names    map[string]*string
	keyNames map[[2]string]*string
}

func newInstances() *instances {
	return &instances{
		priorities: map[string]*Priority{},
		layouts:    map[string]*MIGLayout{},
		pools:      map[string]*Pool{},
		tenants:    map[string]*Tenant{},
		depts:      map[string]*Department{},
		models:     map[string]*Model{},
		alerts:     map[string]*Alert{},
		names:      map[string]*string{},
		keyNames:   map[[2]string]*string{},
	}
}

// name returns the shared string for the range named s; a string of its
// own when in is nil.
func (in *instances) name(s string) *string {
	if in == nil {
		p := new(string)
		*p = s
		return p
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	p, ok := in.names[s]
	if !ok {
		p = new(string) // only here: &s would move every s to the heap
		*p = s
		in.names[s] = p
	}
	return p
}

// keyName returns the shared string for the range of key in map attribute
// attr.
func (in *instances) keyName(attr, key string) *string {
	if in == nil {
		s := attr + keySep + key
		return &s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	p, ok := in.keyNames[[2]string{attr, key}]
	if !ok {
		s := attr + keySep + key
		p = &s
		in.keyNames[[2]string{attr, key}] = p
	}
	return p
}

// lookup returns the instance of m at addr, or nil.
func lookup[T any](in *instances, m map[string]*T, addr string) *T {
	in.mu.Lock()
	defer in.mu.Unlock()
	return m[addr]
}

// record indexes v at addr in m and appends it to list.
func record[T any](in *instances, m map[string]*T, list *[]*T, addr string, v *T) {
	in.mu.Lock()
	defer in.mu.Unlock()
	m[addr] = v
	*list = append(*list, v)
}

// finish stores the instances into cfg in source order.
func (in *instances) finish(cfg *Config) {
	cfg.Priorities = sortBySource(in.cfg.Priorities)
	cfg.MIGLayouts = sortBySource(in.cfg.MIGLayouts)
	cfg.Pools = sortBySource(in.cfg.Pools)
	cfg.Tenants = sortBySource(in.cfg.Tenants)
	cfg.Departments = sortBySource(in.cfg.Departments)
	cfg.Models = sortBySource(in.cfg.Models)
	cfg.Alerts = sortBySource(in.cfg.Alerts)
	pools := make(map[string]*Pool, len(cfg.Pools))
	for _, p := range cfg.Pools {
		pools[p.Name] = p
	}
	for _, t := range cfg.Tenants {
		for _, q := range t.Quotas {
			q.Pool = pools[q.PoolName]
		}
	}
	for _, d := range cfg.Departments {
		for _, q := range d.Quotas {
			q.Pool = pools[q.PoolName]
		}
	}
}

// metaOf is implemented by every instance type through its embedded Meta.
type metaOf interface{ meta() *Meta }

func (m *Meta) meta() *Meta { return m }

func sortBySource[T metaOf](s []T) []T {
	sort.SliceStable(s, func(i, j int) bool {
		a, b := s[i].meta().DeclRange, s[j].meta().DeclRange
		return posLess(a, b)
	})
	return s
}

// evalInstance decodes one instance of a resource block into its typed
// struct and returns the value references to it see.
func (l *loader) evalInstance(n *node, content *hcl.BodyContent, ctx *hcl.EvalContext, k instanceKey) (cty.Value, bool) {
	ctx = childContext(ctx, k)
	meta := instanceMeta(n, k)
	schema := l.idx[n.typ]
	vals, ok := l.attrValues(&meta, schema, content, ctx, "")
	d := decoder{l: l, meta: &meta, vals: vals, ok: true}
	var extra map[string]cty.Value
	switch n.typ {
	case TypePriority:
		l.decodePriority(&d, ok)
	case TypeMIGLayout:
		l.decodeMIGLayout(&d, content, ctx, schema, ok)
	case TypePool:
		l.decodePool(&d, content, ctx, schema, ok)
	case TypeDepartment:
		l.decodeDepartment(&d, content, ctx, schema, ok)
	case TypeTenant:
		extra = l.decodeTenant(&d, content, ctx, schema, ok)
	case TypeModel:
		l.decodeModel(&d, content, ctx, schema, ok)
	case TypeAlert:
		l.decodeAlert(&d, ok)
	}
	if !n.used {
		return cty.DynamicVal, d.ok && ok
	}
	return objectValue(&meta, vals, extra), d.ok && ok
}

// The decodeX methods below decode one instance of a resource block from
// d's values and record it when it is valid; ok says whether its attribute
// values evaluated.

func (l *loader) decodePriority(d *decoder, ok bool) {
	p := &Priority{Meta: *d.meta}
	p.Value = d.int64("value", 0)
	p.Preemption = d.enum("preemption", PreemptLowerPriority, PreemptLowerPriority, PreemptNever)
	p.Description = d.str("description", "")
	p.Meta = *d.meta
	if d.ok && ok {
		record(l.insts, l.insts.priorities, &l.insts.cfg.Priorities, p.Address, p)
	}
}

func (l *loader) decodeMIGLayout(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, ok bool) {
	meta := d.meta
	m := &MIGLayout{Meta: *meta}
	m.GPU = d.str("gpu", "")
	m.Slices = d.layoutSlices("slices")
	m.Devices = l.decodeDevices(d, content, ctx, schema)
	if d.has("slices") && len(m.Devices) > 0 {
		d.fail("Conflicting MIG layout", "A mig_layout takes either slices (the same on every GPU) or device blocks, not both.", meta.Range("slices"))
	}
	if !d.has("slices") && len(m.Devices) == 0 && len(content.Blocks) == 0 && ok {
		d.fail("Empty MIG layout", "A mig_layout needs slices (profile = count on every GPU) or device blocks.", meta.DeclRange)
	}
	m.Meta = *meta
	if d.ok && ok {
		record(l.insts, l.insts.layouts, &l.insts.cfg.MIGLayouts, m.Address, m)
	}
}

func (l *loader) decodePool(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, ok bool) {
	meta := d.meta
	p := &Pool{Meta: *meta}
	p.GPU = d.str("gpu", "")
	p.NodeSelector = d.strMap("node_selector")
	if p.NodeSelector == nil {
		p.NodeSelector = map[string]string{"gpuform.dev/node-group": meta.Name}
	}
	if addr := d.ref("mig_layout", TypeMIGLayout); addr != "" {
		p.MIGLayout = lookup(l.insts, l.insts.layouts, addr)
	}
	p.Overcommit = d.float("overcommit", 1)
	if p.Overcommit <= 0 {
		d.fail("Invalid overcommit", "overcommit must be greater than zero (1.0 means quotas may sum to exactly the pool's capacity).", meta.Range("overcommit"))
	}
	p.MaxUnavailable = d.int("max_unavailable", 1)
	if p.MaxUnavailable < 1 {
		d.fail("Invalid max_unavailable", "max_unavailable must be at least 1: the number of nodes re-partitioned at once.", meta.Range("max_unavailable"))
	}
	p.DriverVersion = d.str("driver_version", "")
	if p.DriverVersion != "" {
		if _, _, err := ParseVersionConstraint(p.DriverVersion); err != nil {
			d.fail("Invalid driver_version", err.Error(), meta.Range("driver_version"))
		}
	}
	p.Mode = d.enum("mode", PoolModeDevicePlugin, PoolModeDevicePlugin, PoolModeDRA)
	p.PricePerGPUHour = d.float("price_per_gpu_hour", 0)
	if p.PricePerGPUHour < 0 || math.IsInf(p.PricePerGPUHour, 0) {
		d.fail("Invalid price", "price_per_gpu_hour must be zero or more: what one GPU of the pool costs per hour.", meta.Range("price_per_gpu_hour"))
	}
	p.Currency = d.str("currency", "USD")
	if !isCurrencyCode(p.Currency) {
		d.fail("Invalid currency", "currency must be an ISO 4217 code: three capital letters, such as \"USD\" or \"EUR\".", meta.Range("currency"))
	}
	p.TimeSlicing = l.decodeSharing(d, content, ctx, schema, StrategyTimeSlicing, false)
	p.MPS = l.decodeSharing(d, content, ctx, schema, StrategyMPS, true)
	p.Taints = l.decodeTaints(d, content, ctx, schema)
	p.Alerts = l.decodePoolAlerts(d, content, ctx, schema)
	p.place = l.decodePlacement(d, content)
	p.ClusterSelector = p.place.selector
	p.Meta = *meta
	if d.ok && ok {
		record(l.insts, l.insts.pools, &l.insts.cfg.Pools, p.Address, p)
	}
}

// decodeTenant also returns the values a tenant's references see besides
// its attributes: the namespace, defaulted.
func (l *loader) decodeTenant(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, ok bool) map[string]cty.Value {
	meta := d.meta
	t := &Tenant{Meta: *meta}
	t.Namespace = d.str("namespace", meta.Name)
	t.Labels = d.strMap("labels")
	t.Cohort = d.str("cohort", l.stack())
	l.tenantDepartment(d, t)
	t.Weight = d.int("weight", 1)
	t.Reclaimable = d.bool("reclaimable", true)
	t.CPU = d.str("cpu", "")
	t.Memory = d.str("memory", "")
	t.Pods = d.int("pods", 0)
	for _, addr := range d.refList("priorities", TypePriority) {
		if p := lookup(l.insts, l.insts.priorities, addr); p != nil {
			t.Priorities = append(t.Priorities, p)
		}
	}
	if addr := d.ref("default_priority", TypePriority); addr != "" {
		t.DefaultPriority = lookup(l.insts, l.insts.priorities, addr)
	}
	t.Admins = d.strList("admins")
	t.Editors = d.strList("editors")
	t.Viewers = d.strList("viewers")
	t.Protect = d.bool("protect", true)
	t.RuntimeClasses = d.strOrList("runtime_class")
	t.Quotas = l.decodeQuotas(d, content, ctx, schema)
	t.Alerts = l.decodeTenantAlerts(d, content, ctx, schema)
	t.place, t.Dispatch = l.decodePlacement(d, content), l.decodeDispatch(d)
	t.ClusterSelector = t.place.selector
	t.Meta = *meta
	if d.ok && ok {
		record(l.insts, l.insts.tenants, &l.insts.cfg.Tenants, t.Address, t)
	}
	return map[string]cty.Value{"namespace": cty.StringVal(t.Namespace)}
}

func (l *loader) decodeModel(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, ok bool) {
	meta := d.meta
	m := &Model{Meta: *meta}
	if addr := d.ref("tenant", TypeTenant); addr != "" {
		m.Tenant = lookup(l.insts, l.insts.tenants, addr)
	}
	if addr := d.ref("pool", TypePool); addr != "" {
		m.Pool = lookup(l.insts, l.insts.pools, addr)
	}
	m.Slice = d.str("slice", "")
	if m.Slice != "" {
		d.checkProfile("slice", m.Slice, meta.Range("slice"))
	}
	m.GPUs = d.int("gpus", 0)
	if m.Slice == "" && !d.has("gpus") {
		m.GPUs = 1
	}
	if m.Slice != "" && d.has("gpus") {
		d.fail("Conflicting GPU request", "A model asks for either one MIG slice (slice) or whole GPUs (gpus), not both.", meta.Range("gpus"))
	}
	m.Format = d.str("format", "")
	m.Runtime = d.str("runtime", "")
	m.DeploymentMode = d.enum("deployment_mode", DeploymentStandard, DeploymentStandard, DeploymentKnative, DeploymentModelMesh)
	m.StorageURI = d.str("storage_uri", "")
	m.MinReplicas, m.MaxReplicas = 1, 1
	if r, ok := d.vals["replicas"]; ok {
		r, _ = r.Unmark()
		m.MinReplicas = d.intValue(r.GetAttr("min"), "replicas", 1)
		m.MaxReplicas = d.intValue(r.GetAttr("max"), "replicas", m.MinReplicas)
		if m.MaxReplicas < m.MinReplicas {
			d.fail("Invalid replicas", fmt.Sprintf("replicas.max (%d) is less than replicas.min (%d).", m.MaxReplicas, m.MinReplicas), meta.Range("replicas"))
		}
	}
	if addr := d.ref("priority", TypePriority); addr != "" {
		m.Priority = lookup(l.insts, l.insts.priorities, addr)
	}
	m.Autoscaling = l.decodeAutoscaling(d, content, ctx, schema)
	m.Env = d.strMap("env")
	m.place = l.decodePlacement(d, content)
	m.ClusterSelector = m.place.selector
	m.Meta = *meta
	if d.ok && ok {
		record(l.insts, l.insts.models, &l.insts.cfg.Models, m.Address, m)
	}
}

// stack is the stack name, or "" before the gpuform block is known.
func (l *loader) stack() string {
	if l.cfg != nil && l.cfg.Settings != nil {
		return l.cfg.Settings.Stack
	}
	return ""
}

func (l *loader) decodeDevices(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema) []*DeviceGroup {
	var out []*DeviceGroup
	ds := schemaBlock(schema, "device")
	for _, b := range content.Blocks {
		if b.Type != "device" {
			continue
		}
		c, diags := b.Body.Content(ds.hclSchema())
		d.l.diags = append(d.l.diags, diags...)
		if diags.HasErrors() {
			d.ok = false
			continue
		}
		g := &DeviceGroup{Meta: Meta{Type: "device", Address: d.meta.Address + ".device", DeclRange: b.DefRange}}
		vals, ok := d.l.attrValues(&g.Meta, ds, c, ctx, "")
		gd := decoder{l: d.l, meta: &g.Meta, vals: vals, ok: true}
		for _, v := range gd.intList("indexes") {
			g.Indexes = append(g.Indexes, v)
		}
		g.Slices = gd.layoutSlices("slices")
		g.Enabled = gd.bool("enabled", true)
		if !g.Enabled && gd.has("slices") && len(g.Slices) > 0 {
			gd.fail("Conflicting device group", "A device group with enabled = false has MIG off and takes no slices.", g.Range("slices"))
		}
		if !ok || !gd.ok {
			d.ok = false
			continue
		}
		out = append(out, g)
	}
	return out
}

// isCurrencyCode reports whether s has the form of an ISO 4217 code.
func isCurrencyCode(s string) bool {
	return len(s) == 3 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// decodeSharing decodes the pool's block typ (time_slicing or mps), nil
// when absent; failOne is the plugin's default of
// fail_requests_greater_than_one for that strategy.
func (l *loader) decodeSharing(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema, typ string, failOne bool) *Sharing {
	var out *Sharing
	l.decodeOneBlock(d, content, ctx, schema, typ, func(meta Meta, td *decoder) {
		out = &Sharing{Meta: meta}
		// The device plugin's limits (2 replicas at least, 48 MPS clients
		// at most) are checked by engine/compile's Validate.
		out.Replicas = td.int("replicas", 1)
		out.RenameByDefault = td.bool("rename_by_default", false)
		out.FailRequestsGreaterThanOne = td.bool("fail_requests_greater_than_one", failOne)
	})
	return out
}

func (l *loader) decodeQuotas(d *decoder, content *hcl.BodyContent, ctx *hcl.EvalContext, schema *BlockSchema) []*Quota {
	qs := schemaBlock(schema, "quota")
	var out []*Quota
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		if b.Type != "quota" {
			continue
		}
		pool := b.Labels[0]
		if prev, dup := seen[pool]; dup {
			d.fail("Duplicate quota block", fmt.Sprintf("This %s already has a quota for pool %q at %s; give one quota block per pool.", d.meta.Type, pool, prev), b.LabelRanges[0])
			continue
		}
		seen[pool] = b.DefRange
		c, diags := b.Body.Content(l.bodySchema(qs))
		d.l.diags = append(d.l.diags, diags...)
		if diags.HasErrors() {
			d.ok = false
			continue
		}
		q := &Quota{PoolName: pool, Meta: Meta{Type: "quota", Label: pool, Address: fmt.Sprintf("%s.quota[%q]", d.meta.Address, pool), DeclRange: b.DefRange}}
		q.ranges.grow(1 + rangeCount(c))
		q.setRange(d.l.insts, "pool", b.LabelRanges[0])
		vals, ok := d.l.attrValues(&q.Meta, qs, c, ctx, "")
		qd := decoder{l: d.l, meta: &q.Meta, vals: vals, ok: true}
		q.Slices = qd.profileMap("slices")
		q.GPUs = qd.int("gpus", 0)
		q.BorrowingLimit = qd.intMap("borrowing_limit")
		q.LendingLimit = qd.intMap("lending_limit")
		if !ok || !qd.ok {
			d.ok = false
			continue
		}
		out = append(out, q)
	}
	return out
}

// schemaBlock returns the nested block schema named typ.
func schemaBlock(s *BlockSchema, typ string) *BlockSchema {
	for i := range s.Blocks {
		if s.Blocks[i].Type == typ {
			return &s.Blocks[i]
		}
	}
	panic("config: no nested block " + typ + " in " + s.Type)
}

// decoder reads converted argument values into Go types, reporting value
// errors against the argument's range.
type decoder struct {
	l    *loader
	meta *Meta
	vals map[string]cty.Value
	ok   bool
}

func (d *decoder) fail(summary, detail string, rng hcl.Range) {
	d.ok = false
	d.l.diags = append(d.l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
}

func (d *decoder) has(name string) bool {
	_, ok := d.vals[name]
	return ok
}

func (d *decoder) get(name string) (cty.Value, bool) {
	v, ok := d.vals[name]
	if !ok {
		return cty.NilVal, false
	}
	if d.l.marked {
		v, _ = v.UnmarkDeep()
	}
	return v, true
}

func (d *decoder) str(name, def string) string {
	v, ok := d.get(name)
	if !ok {
		return def
	}
	return v.AsString()
}

func (d *decoder) enum(name, def string, allowed ...string) string {
	s := d.str(name, def)
	if slices.Contains(allowed, s) {
		return s
	}
	shown := fmt.Sprintf("%q", s)
	if d.meta.IsSensitive(name) {
		shown = "(sensitive)"
	}
	d.fail("Invalid value", fmt.Sprintf("%s must be one of %s; got %s.", name, quoteList(allowed), shown), d.meta.Range(name))
	return def
}

func (d *decoder) bool(name string, def bool) bool {
	v, ok := d.get(name)
	if !ok {
		return def
	}
	return v.True()
}

func (d *decoder) float(name string, def float64) float64 {
	v, ok := d.get(name)
	if !ok {
		return def
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

func (d *decoder) int64(name string, def int64) int64 {
	v, ok := d.get(name)
	if !ok {
		return def
	}
	bf := v.AsBigFloat()
	i, acc := bf.Int64()
	if !bf.IsInt() || acc != big.Exact {
		d.fail("Invalid value", fmt.Sprintf("%s must be a whole number.", name), d.meta.Range(name))
		return def
	}
	return i
}

func (d *decoder) int(name string, def int) int {
	v, ok := d.get(name)
	if !ok {
		return def
	}
	return d.intValue(v, name, def)
}

// intValue converts a number to a non-negative int that fits in 32 bits.
func (d *decoder) intValue(v cty.Value, name string, def int) int {
	if v.IsNull() || !v.IsKnown() {
		return def
	}
	bf := v.AsBigFloat()
	i, acc := bf.Int64()
	if !bf.IsInt() || acc != big.Exact || i < 0 || i > 1<<31-1 {
		d.fail("Invalid value", fmt.Sprintf("%s must be a whole number between 0 and 2147483647.", name), d.meta.Range(name))
		return def
	}
	return int(i)
}

func (d *decoder) intMap(name string) map[string]int {
	v, ok := d.get(name)
	if !ok {
		return nil
	}
	out := make(map[string]int, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		key := k.AsString()
		if ev.IsNull() {
			d.fail("Invalid value", fmt.Sprintf("%s[%q] is null; give a whole number.", name, key), d.meta.KeyRange(name, key))
			continue
		}
		bf := ev.AsBigFloat()
		i, acc := bf.Int64()
		if !bf.IsInt() || acc != big.Exact || i < 0 || i > 1<<31-1 {
			d.fail("Invalid value", fmt.Sprintf("%s[%q] must be a whole number between 0 and 2147483647.", name, key), d.meta.KeyRange(name, key))
			continue
		}
		out[key] = int(i)
	}
	return out
}

func (d *decoder) intList(name string) []int {
	v, ok := d.get(name)
	if !ok {
		return nil
	}
	var out []int
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		out = append(out, d.intValue(ev, name, 0))
	}
	return out
}

func (d *decoder) strMap(name string) map[string]string {
	v, ok := d.get(name)
	if !ok {
		return nil
	}
	out := make(map[string]string, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if ev.IsNull() {
			d.fail("Invalid value", fmt.Sprintf("%s[%q] is null.", name, k.AsString()), d.meta.KeyRange(name, k.AsString()))
			continue
		}
		out[k.AsString()] = ev.AsString()
	}
	return out
}

func (d *decoder) strList(name string) []string {
	v, ok := d.get(name)
	if !ok {
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() {
			d.fail("Invalid value", fmt.Sprintf("%s holds a null element.", name), d.meta.Range(name))
			continue
		}
		out = append(out, ev.AsString())
	}
	return out
}

// ref returns the address of the block a reference argument names.
func (d *decoder) ref(name, want string) string {
	v, ok := d.get(name)
	if !ok {
		return ""
	}
	return d.refValue(v, name, want)
}

func (d *decoder) refList(name, want string) []string {
	v, ok := d.get(name)
	if !ok {
		return nil
	}
	ty := v.Type()
	if !(ty.IsTupleType() || ty.IsListType() || ty.IsSetType()) {
		d.fail("Invalid reference list", fmt.Sprintf("%s must be a list of %s references, like [%s.example]; got %s.", name, want, want, describeValue(v)), d.meta.Range(name))
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if addr := d.refValue(ev, name, want); addr != "" {
			out = append(out, addr)
		}
	}
	return out
}

func (d *decoder) refValue(v cty.Value, name, want string) string {
	if ty := v.Type(); ty.IsObjectType() && ty.HasAttribute("address") {
		if a := v.GetAttr("address"); a.Type() == cty.String && a.IsKnown() && !a.IsNull() {
			addr := a.AsString()
			if strings.HasPrefix(addr, want+".") {
				return addr
			}
			d.fail("Invalid reference", fmt.Sprintf("%s must refer to a %s block, like %s.example; %s is a %s.", name, want, want, addr, strings.SplitN(addr, ".", 2)[0]), d.meta.Range(name))
			return ""
		}
	}
	d.fail("Invalid reference", fmt.Sprintf("%s must refer to a %s block, like %s.example; got %s.", name, want, want, describeValue(v)), d.meta.Range(name))
	return ""
}

// describeValue names what a value is without printing it.
func describeValue(v cty.Value) string {
	ty := v.Type()
	if ty.IsObjectType() {
		for _, av := range ty.AttributeTypes() {
			if av.IsObjectType() && av.HasAttribute("address") {
				return "a repeated block; index one instance, like tenant.team[\"key\"]"
			}
		}
	}
	if ty.IsTupleType() && ty.Length() > 0 && ty.TupleElementType(0).IsObjectType() {
		return "a repeated block; index one instance, like model.m[0]"
	}
	return "a " + ty.FriendlyName()
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
