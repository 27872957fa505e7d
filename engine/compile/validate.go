package compile

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// Validate checks what the language alone cannot: MIG layouts against the
// GPU catalog, pools against their layouts, quotas and models against their
// pools, priorities against tenants, every generated Kubernetes name, and
// what the stack's scheduler backend refuses.
// Each problem is a diagnostic pointing at the attribute that causes it.
func Validate(cfg *config.Config, cat *mig.Catalog) hcl.Diagnostics {
	var sched Scheduler
	if cfg.Settings != nil {
		sched, _ = newScheduler(cfg.Settings) // config accepts only known schedulers
	}
	return validateWith(cfg, cat, sched)
}

// validateWith is Validate with the given scheduler backend (nil for none).
func validateWith(cfg *config.Config, cat *mig.Catalog, sched Scheduler) hcl.Diagnostics {
	v := &validator{cfg: cfg, cat: cat, gpus: map[*config.Pool]*mig.GPU{}, offers: map[*config.Pool]map[string]bool{}, rejected: map[*config.MIGLayout]bool{}, quotas: capacity.QuotasOf(cfg)}
	v.settings()
	for _, p := range cfg.Priorities {
		v.priority(p)
	}
	for _, l := range cfg.MIGLayouts {
		v.layout(l)
	}
	for _, p := range cfg.Pools {
		v.pool(p)
	}
	v.currency()
	v.draPools()
	v.tenants()
	v.multiKueue() // validate_multikueue.go
	v.departments(sched)
	for _, m := range cfg.Models {
		v.model(m)
		v.env(m)
	}
	v.driverPins()
	v.isolation()
	v.tenancy()
	v.alerts()
	if sched != nil {
		v.diags = append(v.diags, sched.Validate(cfg, v.quotas)...)
		v.diags = append(v.diags, foreignArguments(cfg, cfg.Settings.Scheduler, sched, schedulerArguments(cfg.Settings))...)
	}
	v.uniqueNames()
	return config.CleanDiagnostics(v.diags)
}

type validator struct {
	cfg    *config.Config
	cat    *mig.Catalog
	diags  hcl.Diagnostics
	gpus   map[*config.Pool]*mig.GPU
	offers map[*config.Pool]map[string]bool // MIG profiles a pool's layout offers
	// rejected holds the layouts with an error in their GPU or placement.
	// A pool with such a layout, or whose GPU refuses its layout, has no
	// offers: the quotas and models on it are not checked against them,
	// so that the one error at the layout or pool is the only one (no
	// "offers whole GPUs", no rejected profile listed as offered).
	rejected map[*config.MIGLayout]bool
	// quotas are the tenants' GPU quotas, computed once for every check.
	quotas *capacity.Quotas
}

func (v *validator) errorf(rng hcl.Range, summary, format string, args ...any) {
	v.diags = append(v.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  rng.Ptr(),
	})
}

// shown is how a diagnostic quotes val, the value of attribute attr of
// meta's block: (sensitive) when it derives from a sensitive variable.
func shown(meta *config.Meta, attr string, val any) string {
	if meta.IsSensitive(attr) {
		return engine.SensitiveValue
	}
	if s, ok := val.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(val)
}

// name checks a generated Kubernetes name with one of apimachinery's validators.
func (v *validator) name(rng hcl.Range, what, name string, check func(string) []string) {
	if errs := check(name); len(errs) > 0 {
		v.errorf(rng, "Invalid Kubernetes name", "%s %q is not a valid Kubernetes name: %s.", what, name, strings.Join(errs, "; "))
	}
}

func (v *validator) settings() {
	s := v.cfg.Settings
	if s == nil {
		return
	}
	if errs := validation.IsValidLabelValue(s.Stack); len(errs) > 0 || len(validation.IsDNS1123Label(s.Stack)) > 0 {
		v.errorf(s.Range("stack"), "Invalid stack name", "The stack %q becomes the label gpuform.dev/stack and the lock Lease gpuform-%s, so it must be a DNS-1123 label: lower case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters.", s.Stack, s.Stack)
	}
	if ns := s.GPUOperatorNamespace; ns != "" {
		v.name(s.Range("gpu_operator_namespace"), "gpu_operator_namespace", ns, validation.IsDNS1123Label)
	}
}

func (v *validator) priority(p *config.Priority) {
	v.name(p.DeclRange, "The PriorityClass name", p.Name, validation.IsDNS1123Subdomain)
	const maxUser = 1_000_000_000
	if p.Value > maxUser || p.Value < -2147483648 {
		v.errorf(p.Range("value"), "Invalid priority value", "A PriorityClass value must be between -2147483648 and %d (higher values are reserved for system classes); got %s.", maxUser, shown(&p.Meta, "value", p.Value))
	}
}

// lookupGPU resolves a catalog key or alias, reporting unknown models.
func (v *validator) lookupGPU(name string, rng hcl.Range) *mig.GPU {
	g, ok := v.cat.Lookup(name)
	if !ok {
		var keys []string
		for _, g := range v.cat.GPUs() {
			keys = append(keys, g.Key)
		}
		v.errorf(rng, "Unknown GPU model", "%q is not in the GPU catalog. Use a catalog key (%s) or a GPU Feature Discovery product name such as NVIDIA-A100-SXM4-80GB; `gpuform catalog` lists them.", name, strings.Join(keys, ", "))
		return nil
	}
	return g
}

func (v *validator) layout(l *config.MIGLayout) {
	v.name(l.DeclRange, "The MIG layout name (the value of label nvidia.com/mig.config)", l.Name, validation.IsValidLabelValue)
	if len(l.Name) > 54 {
		v.errorf(l.DeclRange, "MIG layout name too long", "The layout name %q becomes the label value %q-<8 hex digits>, which may have at most 63 characters; use at most 54.", l.Name, l.Name)
	}
	v.rejected[l] = !v.placeable(l)
}

// placeable checks layout l's GPU and its placements, and reports whether
// they passed.
func (v *validator) placeable(l *config.MIGLayout) bool {
	g := v.lookupGPU(l.GPU, l.Range("gpu"))
	if g == nil {
		return false
	}
	if !g.MIG {
		v.errorf(l.Range("gpu"), "GPU does not support MIG", "%s has no Multi-Instance GPU support, so it takes no mig_layout; share it with a time_slicing block on the pool instead.", g.Key)
		return false
	}
	if len(l.Devices) == 0 {
		return v.solve(g, l.Slices, &l.Meta, "slices")
	}
	ok := true
	seen := map[int]hcl.Range{}
	for _, d := range l.Devices {
		for _, i := range d.Indexes {
			if prev, dup := seen[i]; dup {
				v.errorf(d.Range("indexes"), "Overlapping device groups", "GPU index %d is already in the device group at %s; each GPU belongs to one group.", i, prev)
				ok = false
			}
			seen[i] = d.Range("indexes")
		}
		if d.Enabled {
			ok = v.solve(g, d.Slices, &d.Meta, "slices") && ok
		}
	}
	return ok
}

// solve proves a layout placeable, or reports why not at the offending key
// and returns false.
func (v *validator) solve(g *mig.GPU, slices map[string]int, meta *config.Meta, attr string) bool {
	_, err := mig.Solve(g, slices)
	var me *mig.Error
	if err == nil {
		return true
	}
	if !errors.As(err, &me) {
		v.errorf(meta.Range(attr), "Invalid MIG layout", "%s.", sentence(err.Error()))
		return false
	}
	rng := meta.Range(attr)
	if me.Profile != "" && (me.Reason == mig.ReasonUnknownProfile || me.Reason == mig.ReasonOverMax || me.Reason == mig.ReasonInvalidCount || me.Reason == mig.ReasonMediaEngines) {
		rng = meta.KeyRange(attr, me.Profile)
	}
	summary := map[mig.Reason]string{
		mig.ReasonUnknownProfile:   "Unknown MIG profile",
		mig.ReasonOverMax:          "Too many MIG instances",
		mig.ReasonMultipleME:       "More than one media-extension profile",
		mig.ReasonMediaEngines:     "MIG media engines exhausted",
		mig.ReasonComputeExhausted: "MIG compute slices exhausted",
		mig.ReasonMemoryExhausted:  "MIG memory slots exhausted",
		mig.ReasonInvalidCount:     "Invalid MIG instance count",
		mig.ReasonNotMIGCapable:    "GPU does not support MIG",
	}[me.Reason]
	if summary == "" {
		summary = "Invalid MIG layout"
	}
	v.errorf(rng, summary, "%s.", sentence(strings.TrimSuffix(me.Message, ".")))
	return false
}

// sentence starts s, a message of the MIG solver ("profile ... allows at
// most 3 instances"), upper case, as a diagnostic's detail.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// minTimeSlicingReplicas is the fewest replicas the NVIDIA device plugin
// takes in a time-slicing config: k8s-device-plugin v0.20.0,
// api/config/v1/replicas.go, ReplicatedResource.UnmarshalJSON:
// `if s.Replicas < 2 { return fmt.Errorf("number of replicas must be >= 2") }`.
// The plugin then fails to load the config, and the node offers no GPUs.
const minTimeSlicingReplicas = 2

func (v *validator) pool(p *config.Pool) {
	v.name(p.DeclRange, "The pool name (label gpuform.dev/pool and ResourceFlavor name)", p.Name, validation.IsDNS1123Label)
	for k, val := range p.NodeSelector {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			v.errorf(p.KeyRange("node_selector", k), "Invalid node selector", "Label key %q: %s.", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
			v.errorf(p.KeyRange("node_selector", k), "Invalid node selector", "Label value %q: %s.", val, strings.Join(errs, "; "))
		}
	}
	v.sharing(p)
	g := v.lookupGPU(p.GPU, p.Range("gpu"))
	if p.MIGLayout != nil && p.TimeSlicing != nil {
		v.errorf(p.Range("time_slicing"), "Conflicting GPU sharing", "A pool is shared either by MIG (mig_layout) or by time-slicing (time_slicing), not both; remove one.")
	}
	if g == nil {
		return
	}
	v.gpus[p] = g
	if p.MIGLayout == nil {
		return
	}
	if !g.MIG {
		v.errorf(p.Range("mig_layout"), "GPU does not support MIG", "Pool %s has %s GPUs, which have no MIG; use time_slicing instead of mig_layout.", p.Name, g.Key)
		return
	}
	// A layout for a GPU without MIG has its own error, at the layout.
	lg, ok := v.cat.Lookup(p.MIGLayout.GPU)
	if ok && lg.MIG && lg.Key != g.Key {
		v.errorf(p.Range("mig_layout"), "MIG layout for another GPU", "Pool %s has %s GPUs but %s is a layout for %s; MIG profiles differ between GPU models.", p.Name, g.Key, p.MIGLayout.Address, lg.Key)
		return
	}
	if v.rejected[p.MIGLayout] {
		return
	}
	offers := map[string]bool{}
	for prof, n := range p.MIGLayout.Slices {
		if n > 0 {
			offers[prof] = true
		}
	}
	for _, d := range p.MIGLayout.Devices {
		for prof, n := range d.Slices {
			if n > 0 && d.Enabled {
				offers[prof] = true
			}
		}
	}
	v.offers[p] = offers
}

// currency checks that the pools with a price share one currency: gpuform
// usage adds their costs up.
func (v *validator) currency() {
	var first *config.Pool
	for _, p := range v.cfg.Pools {
		if p.PricePerGPUHour == 0 {
			continue
		}
		if first == nil {
			first = p
			continue
		}
		if p.Currency != first.Currency {
			v.errorf(p.Range("currency"), "Mixed currencies", "Pool %s is priced in %s but pool %s in %s; gpuform usage adds costs up, so every priced pool uses one currency.", p.Name, p.Currency, first.Name, first.Currency)
		}
	}
}

func (v *validator) tenants() {
	namespaces := map[string]*config.Tenant{}
	for _, t := range v.cfg.Tenants {
		v.name(t.Range("namespace"), "The namespace", t.Namespace, validation.IsDNS1123Label)
		if t.Namespace == engine.LockNamespace {
			v.errorf(t.Range("namespace"), "Reserved namespace", "%s cannot own namespace %s: it holds gpuform's apply locks, which no stack may own (a tenant's namespace is deleted with the tenant). Choose another namespace.", t.Address, engine.LockNamespace)
		} else if why := v.reservedNamespace(t.Namespace); why != "" {
			v.errorf(t.Range("namespace"), "Reserved namespace", "%s cannot own namespace %s: %s; its admins would hold it, and it would be deleted with the tenant. Choose another namespace.", t.Address, t.Namespace, why)
		}
		if prev, dup := namespaces[t.Namespace]; dup {
			v.errorf(t.Range("namespace"), "Duplicate namespace", "%s and %s both claim namespace %q; each tenant owns its own namespace.", prev.Address, t.Address, t.Namespace)
		} else {
			namespaces[t.Namespace] = t
		}
		v.tenant(t)
	}
}

func (v *validator) tenant(t *config.Tenant) {
	for k, val := range t.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			v.errorf(t.KeyRange("labels", k), "Invalid label", "Label key %q: %s.", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 && !t.IsSensitive("labels") {
			v.errorf(t.KeyRange("labels", k), "Invalid label", "Label value %q: %s.", val, strings.Join(errs, "; "))
		}
	}
	for _, q := range []struct{ attr, val string }{{"cpu", t.CPU}, {"memory", t.Memory}} {
		if q.val == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q.val); err != nil {
			v.errorf(t.Range(q.attr), "Invalid quantity", "%s %s is not a Kubernetes quantity (like \"64\", \"500m\" or \"256Gi\").", q.attr, shown(&t.Meta, q.attr, q.val))
		}
	}
	for _, s := range []struct {
		attr string
		subs []string
	}{{"admins", t.Admins}, {"editors", t.Editors}, {"viewers", t.Viewers}} {
		for _, sub := range s.subs {
			if err := checkSubject(sub); err != "" && t.IsSensitive(s.attr) {
				v.errorf(t.Range(s.attr), "Invalid RBAC subject", "%s in %s is not a subject: user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME.", engine.SensitiveValue, s.attr)
			} else if err != "" {
				v.errorf(t.Range(s.attr), "Invalid RBAC subject", "%q in %s: %s", sub, s.attr, err)
			} else if why := clusterWideSubject(sub); why != "" && t.IsSensitive(s.attr) {
				v.errorf(t.Range(s.attr), "Cluster-wide RBAC subject", "%s in %s is a cluster-wide identity of Kubernetes itself, not a tenant's: name the tenant's own users, groups or service accounts.", engine.SensitiveValue, s.attr)
			} else if why != "" {
				v.errorf(t.Range(s.attr), "Cluster-wide RBAC subject", "%q in %s: %s, not a tenant's; name the tenant's own users, groups or service accounts.", sub, s.attr, why)
			}
		}
	}
	if t.DefaultPriority != nil && len(t.Priorities) > 0 && !slices.Contains(t.Priorities, t.DefaultPriority) {
		v.errorf(t.Range("default_priority"), "Default priority not allowed", "%s is the default priority of %s but is not in its priorities (%s).", t.DefaultPriority.Address, t.Address, priorityNames(t.Priorities))
	}
	for _, q := range t.Quotas {
		v.quota(&t.Meta, q)
	}
}

// reservedNamespace says why no tenant may own namespace ns ("" when one
// may): Kubernetes' own (default, kube-*) and the ones the stack writes
// into that a tenant's admins must not hold: the GPU Operator's (device
// plugin and MIG ConfigMaps) and, when the stack has alerts, the alerts
// namespace (every tenant's PrometheusRules).
func (v *validator) reservedNamespace(ns string) string {
	s := v.cfg.Settings
	switch {
	case ns == "default" || strings.HasPrefix(ns, "kube-"):
		return "it is Kubernetes' own"
	case s != nil && ns == s.GPUOperatorNamespace:
		return "it is the GPU Operator's (gpu_operator_namespace), where the stack writes the device plugin's and MIG manager's configuration"
	case s != nil && ns == s.AlertsNamespace && v.hasAlerts():
		return "it is alerts_namespace, where the stack writes every pool's and tenant's alert rules"
	}
	return ""
}

// hasAlerts reports whether the stack writes PrometheusRules.
func (v *validator) hasAlerts() bool {
	return len(v.cfg.Alerts) > 0 ||
		slices.ContainsFunc(v.cfg.Pools, func(p *config.Pool) bool { return p.Alerts != nil }) ||
		slices.ContainsFunc(v.cfg.Tenants, func(t *config.Tenant) bool { return t.Alerts != nil })
}

// clusterWideSubject says why a well-formed subject is an identity of the
// whole cluster that no tenant's RoleBinding may name ("" when it is not):
// the API server's system: groups (system:authenticated and
// system:unauthenticated take in every caller, system:masters is
// cluster-admin, system:serviceaccounts every service account), its
// system: users (system:anonymous, components, service accounts by user
// name) and the service accounts of kube-* namespaces.
func clusterWideSubject(s string) string {
	kind, name, _ := strings.Cut(s, ":")
	switch {
	case kind == "group" && strings.HasPrefix(name, "system:"):
		return "system: groups are made by the API server and take in callers across the cluster (every caller, anonymous ones, cluster admins, every service account)"
	case kind == "user" && strings.HasPrefix(name, "system:"):
		return "system: users are the API server's anonymous user, its components and service accounts"
	case kind == "serviceaccount" && strings.HasPrefix(name, "kube-"):
		return "service accounts of kube-* namespaces are the cluster's own components"
	}
	return ""
}

// checkSubject validates an RBAC subject of the form kind:name.
func checkSubject(s string) string {
	kind, name, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return "a subject is user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME."
	}
	switch kind {
	case "user", "group":
		return ""
	case "serviceaccount":
		ns, sa, ok := strings.Cut(name, ":")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(sa)) > 0 {
			return "a service account subject is serviceaccount:NAMESPACE:NAME."
		}
		return ""
	}
	return fmt.Sprintf("unknown subject kind %q; use user:, group: or serviceaccount:.", kind)
}

// quota checks quota block q of owner (a tenant or a department).
func (v *validator) quota(owner *config.Meta, q *config.Quota) {
	p := q.Pool
	if p == nil {
		var names []string
		for _, p := range v.cfg.Pools {
			names = append(names, p.Name)
		}
		v.errorf(q.Range("pool"), "Unknown pool", "%s %s has a quota for pool %q, which is not declared. Declared pools: %s.", blockTitle(owner), owner.Name, q.PoolName, strings.Join(names, ", "))
		return
	}
	offers, isMIG := v.offers[p]
	resources := map[string]bool{}
	switch {
	case isMIG:
		if q.GPUs > 0 || q.HasAttr("gpus") {
			v.errorf(q.Range("gpus"), "Whole GPUs on a MIG pool", "Pool %s is partitioned by %s; give this quota as slices = { \"<profile>\" = N }.", p.Name, p.MIGLayout.Address)
		}
		for prof := range q.Slices {
			resources[prof] = true
			if !offers[prof] {
				v.errorf(q.KeyRange("slices", prof), "Slice not in the pool's layout", "Profile %q is not offered by pool %s, whose layout %s has %s.", prof, p.Name, p.MIGLayout.Address, sortedKeys(offers))
			}
		}
	case p.MIGLayout != nil:
		// The pool's layout, or its GPU, was refused: that error is the one.
	case v.gpus[p] != nil:
		if len(q.Slices) > 0 {
			v.errorf(q.Range("slices"), "MIG slices on a pool without MIG", "Pool %s has no mig_layout, so it offers whole GPUs; give this quota as gpus = N.", p.Name)
		}
		resources["gpus"] = true
	}
	for _, attr := range []string{"borrowing_limit", "lending_limit"} {
		m := q.BorrowingLimit
		if attr == "lending_limit" {
			m = q.LendingLimit
		}
		for k := range m {
			if !resources[k] && len(resources) > 0 {
				v.errorf(q.KeyRange(attr, k), "Limit for a resource without quota", "%s names %q, but this quota covers %s.", attr, k, sortedKeys(resources))
			}
		}
	}
}

func (v *validator) model(m *config.Model) {
	v.name(m.DeclRange, "The InferenceService name", m.Name, validation.IsDNS1035Label)
	if m.Tenant == nil || m.Pool == nil {
		return
	}
	p := m.Pool
	offers, isMIG := v.offers[p]
	switch {
	case isMIG && m.Slice == "":
		v.errorf(m.Range("gpus"), "Whole GPUs on a MIG pool", "Pool %s is partitioned by %s; a model on it asks for one slice, like slice = %q.", p.Name, p.MIGLayout.Address, firstKey(offers))
	case isMIG && !offers[m.Slice]:
		v.errorf(m.Range("slice"), "Slice not in the pool's layout", "Profile %q is not offered by pool %s, whose layout %s has %s.", m.Slice, p.Name, p.MIGLayout.Address, sortedKeys(offers))
	case !isMIG && m.Slice != "" && v.gpus[p] != nil && p.MIGLayout == nil:
		v.errorf(m.Range("slice"), "MIG slice on a pool without MIG", "Pool %s has no mig_layout, so models on it ask for whole GPUs (gpus = N).", p.Name)
	}
	if m.GPUs == 0 && m.Slice == "" {
		v.errorf(m.Range("gpus"), "Model without GPUs", "gpus must be at least 1 for a model on pool %s.", p.Name)
	}
	v.modelSharing(m)
	hasQuota := false
	for _, q := range m.Tenant.Quotas {
		if q.PoolName == p.Name {
			hasQuota = true
		}
	}
	if !hasQuota {
		v.errorf(m.Range("pool"), "No quota on this pool", "Tenant %s has no quota block for pool %s, so its model %s could never be scheduled there; add quota %q { ... } to the tenant.", m.Tenant.Name, p.Name, m.Name, p.Name)
	}
	if m.Priority != nil && len(m.Tenant.Priorities) > 0 && !slices.Contains(m.Tenant.Priorities, m.Priority) {
		v.errorf(m.Range("priority"), "Priority not allowed for this tenant", "%s uses %s, but tenant %s allows only %s.", m.Address, m.Priority.Address, m.Tenant.Name, priorityNames(m.Tenant.Priorities))
	}
}

func priorityNames(ps []*config.Priority) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Address
	}
	return strings.Join(names, ", ")
}

func sortedKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, fmt.Sprintf("%q", k))
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

func firstKey(m map[string]bool) string {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) == 0 {
		return "1g.10gb"
	}
	return keys[0]
}

// uniqueNames reports two instances that would write one Kubernetes object:
// e.g. priority "a-b" and priority "a" with for_each key "b".
func (v *validator) uniqueNames() {
	type named struct {
		kind, name string
		meta       *config.Meta
	}
	var all []named
	for _, p := range v.cfg.Priorities {
		all = append(all, named{"PriorityClass", p.Name, &p.Meta})
	}
	for _, l := range v.cfg.MIGLayouts {
		all = append(all, named{"MIG config", l.Name, &l.Meta})
	}
	for _, p := range v.cfg.Pools {
		all = append(all, named{"pool", p.Name, &p.Meta})
	}
	for _, m := range v.cfg.Models {
		ns := ""
		if m.Tenant != nil {
			ns = m.Tenant.Namespace + "/"
		}
		all = append(all, named{"InferenceService", ns + m.Name, &m.Meta})
	}
	seen := map[string]*config.Meta{}
	for _, n := range all {
		k := n.kind + " " + n.name
		if prev, dup := seen[k]; dup {
			v.errorf(n.meta.DeclRange, "Duplicate name", "%s and %s both become %s %q; give one of them another name or key.", prev.Address, n.meta.Address, n.kind, n.name)
			continue
		}
		seen[k] = n.meta
	}
}
