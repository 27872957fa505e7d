package compile

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// tenant compiles a tenant: its Namespace, ResourceQuota and RoleBindings,
// then what the scheduler makes of its quotas.
func (c *compiler) tenant(t *config.Tenant) {
	sens := tenantSensitive(t)
	nsKey := engine.KeyFor(engine.KindNamespace, "", t.Namespace)
	c.add(t.Address, &engine.Object{Object: c.namespace(t), Sensitive: sens})
	if rq := c.resourceQuota(t); rq != nil {
		c.add(t.Address, &engine.Object{Object: rq, DependsOn: []engine.Key{nsKey}, Sensitive: sens})
	}
	c.roleBindings(t, nsKey, sens)
	if dispatched(c.cfg, t) {
		c.add(t.Address, c.multiKueueTenant(t)...) // multikueue.go
		return
	}
	c.add(t.Address, c.sched.Tenant(t, c.quotas.Of(t))...)
}

// namespace is the tenant's Namespace, with its labels and the annotations
// gpuform and the stack's admission policies read back: protection,
// default priority, allowed priorities, GPU pools and runtime classes.
func (c *compiler) namespace(t *config.Tenant) *unstructured.Unstructured {
	nsObj := newObject(engine.KindNamespace, "", t.Namespace, c.stack, t.Address)
	meta := nsObj.Object["metadata"].(map[string]any)
	labels, annotations := meta["labels"].(map[string]any), meta["annotations"].(map[string]any)
	for k, v := range t.Labels {
		if k != engine.LabelManagedBy && k != engine.LabelStack && k != engine.LabelDefaultPriority {
			labels[k] = v
		}
	}
	if t.Protect {
		annotations[engine.AnnotProtect] = "true"
	}
	c.tenancyAnnotations(t, labels, annotations)
	if runtimeClassAnnotation(t, annotations) {
		c.enforceRuntimeClasses = true
	}
	return nsObj
}

// resourceQuota is the tenant's ResourceQuota: its GPU limits
// (capacity.TenantQuota.Hard, which names every GPU resource the stack's
// pools offer, 0 where the tenant has none: Kubernetes does not limit a
// resource a ResourceQuota does not name) with what its scheduler adds,
// and its cpu, memory and pods. It is nil only when it bounds nothing.
func (c *compiler) resourceQuota(t *config.Tenant) *unstructured.Unstructured {
	limits := capacity.Counts{}
	for r, n := range c.quotas.Of(t).Hard() {
		limits[capacity.QuotaKey(r)] = n
	}
	limits.Add(c.sched.ResourceQuota(c.quotas, t))
	hard := make(map[string]any, len(limits)+3)
	for k, n := range limits {
		hard[k] = strconv.FormatInt(n, 10)
	}
	if t.CPU != "" {
		hard["requests.cpu"] = t.CPU
	}
	if t.Memory != "" {
		hard["requests.memory"] = t.Memory
	}
	if t.HasAttr("pods") {
		hard["pods"] = strconv.Itoa(t.Pods)
	}
	if len(hard) == 0 {
		return nil
	}
	rq := newObject(engine.KindResourceQuota, t.Namespace, engine.QuotaName, c.stack, t.Address)
	rq.Object["spec"] = map[string]any{"hard": hard}
	return rq
}

// roleBindings binds the tenant's admins, editors and viewers to the
// built-in admin, edit and view ClusterRoles in its namespace. Access comes
// last: each RoleBinding depends on the tenant's Namespace and
// ResourceQuota, and the apply walk makes it wait for the rest of the
// tenant's block that ranks before it (its scheduler queues) and the
// stack's admission policies and bindings, then proves them enforced in
// the namespace before it writes it (docs/security.md, "Enforcement before
// access").
func (c *compiler) roleBindings(t *config.Tenant, nsKey engine.Key, sens bool) {
	deps := []engine.Key{nsKey}
	quota := engine.KeyFor(engine.KindResourceQuota, t.Namespace, engine.QuotaName)
	for i := len(c.d.Objects) - 1; i >= 0 && c.d.Objects[i].Address == t.Address; i-- {
		if c.d.Objects[i].Key() == quota {
			deps = append(deps, quota)
		}
	}
	for _, rb := range []struct {
		name, role string
		subjects   []string
	}{{"gpuform-admins", "admin", t.Admins}, {"gpuform-editors", "edit", t.Editors}, {"gpuform-viewers", "view", t.Viewers}} {
		if len(rb.subjects) == 0 {
			continue
		}
		o := newObject(engine.KindRoleBinding, t.Namespace, rb.name, c.stack, t.Address)
		o.Object["roleRef"] = pairs("apiGroup", engine.KindRoleBinding.Group, "kind", "ClusterRole", "name", rb.role)
		subs := make([]any, 0, len(rb.subjects))
		for _, s := range rb.subjects {
			subs = append(subs, subject(s))
		}
		o.Object["subjects"] = subs
		c.add(t.Address, &engine.Object{Object: o, DependsOn: deps, Sensitive: sens})
	}
}

// subject converts "user:x", "group:x" or "serviceaccount:ns:name" to an RBAC subject.
func subject(s string) map[string]any {
	kind, name, _ := strings.Cut(s, ":")
	switch kind {
	case "group":
		return map[string]any{"apiGroup": engine.KindRoleBinding.Group, "kind": "Group", "name": name}
	case "serviceaccount":
		ns, sa, _ := strings.Cut(name, ":")
		return map[string]any{"kind": "ServiceAccount", "namespace": ns, "name": sa}
	}
	return map[string]any{"apiGroup": engine.KindRoleBinding.Group, "kind": "User", "name": name}
}
