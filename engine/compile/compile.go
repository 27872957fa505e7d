package compile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// Compile turns a validated configuration into the desired objects of
// DESIGN.md §2 and the node labels of each pool, with dependency edges.
func Compile(cfg *config.Config) (*engine.Desired, error) {
	c := &compiler{cfg: cfg, stack: cfg.Settings.Stack, d: &engine.Desired{Stack: cfg.Settings.Stack, Kinds: engine.ManagedKinds(), Sources: map[string]string{}}}
	for _, p := range cfg.Priorities {
		c.priority(p)
	}
	if err := c.pools(); err != nil {
		return nil, err
	}
	for _, t := range cfg.Tenants {
		c.tenant(t)
	}
	for _, m := range cfg.Models {
		c.model(m)
	}
	if c.enforcePriorities {
		c.prioritiesPolicy()
	}
	return c.d, nil
}

// prioritiesPolicy adds the stack's ValidatingAdmissionPolicy and binding
// that reject pods whose priorityClassName is not among their tenant's
// priorities. One policy serves every tenant: it reads the allowed classes
// from the gpuform.dev/priorities annotation of the pod's Namespace
// (namespaceObject), which tenants cannot edit. A policy per tenant cost
// the API server a CEL compilation each (tens of milliseconds) and a match
// check per policy on every admission request, cluster-wide.
func (c *compiler) prioritiesPolicy() {
	name := "gpuform-" + c.stack + "-priorities"
	annot := fmt.Sprintf("namespaceObject.metadata.annotations[%q]", engine.AnnotPriorities)
	vap := newObject("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", name, c.stack, engine.StackAddress)
	vap.Object["spec"] = map[string]any{
		"failurePolicy": "Fail",
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"},
		}}},
		"validations": []any{map[string]any{
			// Pods of namespaces without the annotation (tenants without
			// priorities) pass.
			"expression": fmt.Sprintf("!has(object.spec.priorityClassName) || !has(namespaceObject.metadata.annotations) || !(%q in namespaceObject.metadata.annotations) || object.spec.priorityClassName in %s.split(',')", engine.AnnotPriorities, annot),
			"messageExpression": fmt.Sprintf("'pods in namespace ' + namespaceObject.metadata.name + ' may use priority classes ' + %s.replace(',', ', ') + ' only (gpuform ' + namespaceObject.metadata.annotations[%q] + ')'",
				annot, engine.AnnotAddress),
		}},
	}
	c.add(engine.StackAddress, &engine.Object{Object: vap})
	bind := newObject("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", name, c.stack, engine.StackAddress)
	bind.Object["spec"] = map[string]any{
		"policyName":        name,
		"validationActions": []any{"Deny"},
		"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{
			engine.LabelStack: c.stack,
		}}},
	}
	c.add(engine.StackAddress, &engine.Object{Object: bind, DependsOn: []engine.Key{{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy", Name: name}}})
}

type compiler struct {
	// enforcePriorities is set once a tenant lists priorities.
	enforcePriorities bool
	cfg               *config.Config
	stack             string
	d                 *engine.Desired
}

func (c *compiler) add(address string, o *engine.Object) *engine.Object {
	o.Address = address
	c.d.Objects = append(c.d.Objects, o)
	return o
}

func (c *compiler) kueue() bool   { return c.cfg.Settings.Scheduler == config.SchedulerKueue }
func (c *compiler) volcano() bool { return c.cfg.Settings.Scheduler == config.SchedulerVolcano }

func (c *compiler) priority(p *config.Priority) {
	pc := newObject("scheduling.k8s.io/v1", "PriorityClass", "", p.Name, c.stack, p.Address)
	pc.Object["value"] = p.Value
	pc.Object["preemptionPolicy"] = p.Preemption
	if p.Description != "" {
		pc.Object["description"] = p.Description
	}
	c.add(p.Address, &engine.Object{Object: pc, Sensitive: anySensitive(&p.Meta)})
	if c.kueue() {
		wpc := newObject("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", "", p.Name, c.stack, p.Address)
		wpc.Object["value"] = p.Value
		if p.Description != "" {
			wpc.Object["description"] = p.Description
		}
		c.add(p.Address, &engine.Object{Object: wpc, Sensitive: anySensitive(&p.Meta)})
	}
}

// pools compiles node labels, the GPU Operator ConfigMaps and Kueue flavors.
func (c *compiler) pools() error {
	s := c.cfg.Settings
	migConfigs := map[string]any{}
	dpConfigs := map[string]any{}
	for _, p := range c.cfg.Pools {
		np := &engine.NodePool{Address: p.Address, Pool: p.Name, Selector: p.NodeSelector, Labels: map[string]string{engine.LabelPool: p.Name}, MaxUnavailable: p.MaxUnavailable}
		switch {
		case p.MIGLayout != nil && s.MIGBackend == config.BackendAgent:
			layout, err := engine.AgentLayout(p.MIGLayout)
			if err != nil {
				return fmt.Errorf("compile %s: %w", p.Address, err)
			}
			np.Annotations = map[string]string{engine.AnnotMIGLayout: layout}
			np.MIGState = engine.AnnotMIGState
		case p.MIGLayout != nil:
			name, conf := engine.MIGPartedName(p.MIGLayout)
			np.Labels[engine.LabelMIGConfig] = name
			np.MIGState = engine.LabelMIGState
			migConfigs[name] = conf
			np.DependsOn = append(np.DependsOn, engine.Key{Kind: "ConfigMap", Namespace: s.GPUOperatorNamespace, Name: engine.MIGPartedConfig})
		case p.TimeSlicing != nil:
			np.Labels[engine.LabelDPConfig] = p.Name
			dpConfigs[p.Name] = map[string]any{
				"version": "v1",
				"sharing": map[string]any{"timeSlicing": map[string]any{"resources": []any{
					map[string]any{"name": engine.ResourceGPU, "replicas": int64(p.TimeSlicing.Replicas)},
				}}},
			}
			np.DependsOn = append(np.DependsOn, engine.Key{Kind: "ConfigMap", Namespace: s.GPUOperatorNamespace, Name: engine.DevicePluginConf})
		}
		c.d.Pools = append(c.d.Pools, np)
		if c.kueue() {
			rf := newObject("kueue.x-k8s.io/v1beta2", "ResourceFlavor", "", p.Name, c.stack, p.Address)
			rf.Object["spec"] = map[string]any{"nodeLabels": map[string]any{engine.LabelPool: p.Name}}
			c.add(p.Address, &engine.Object{Object: rf, Sensitive: anySensitive(&p.Meta)})
		}
	}
	if len(migConfigs) > 0 {
		// Keep the operator's own off/on configs so nodes can be reset.
		migConfigs["all-disabled"] = []any{map[string]any{"devices": "all", "mig-enabled": false}}
		migConfigs["all-enabled"] = []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": map[string]any{}}}
		doc, err := yaml.Marshal(map[string]any{"version": "v1", "mig-configs": migConfigs})
		if err != nil {
			return fmt.Errorf("compile mig-parted config: %w", err)
		}
		cm := newObject("v1", "ConfigMap", s.GPUOperatorNamespace, engine.MIGPartedConfig, c.stack, engine.StackAddress)
		cm.Object["data"] = map[string]any{"config.yaml": string(doc)}
		c.add(engine.StackAddress, &engine.Object{Object: cm})
	}
	if len(dpConfigs) > 0 {
		data := map[string]any{}
		for name, conf := range dpConfigs {
			doc, err := yaml.Marshal(conf)
			if err != nil {
				return fmt.Errorf("compile device-plugin config %s: %w", name, err)
			}
			data[name] = string(doc)
		}
		cm := newObject("v1", "ConfigMap", s.GPUOperatorNamespace, engine.DevicePluginConf, c.stack, engine.StackAddress)
		cm.Object["data"] = data
		c.add(engine.StackAddress, &engine.Object{Object: cm})
	}
	return nil
}

func (c *compiler) tenant(t *config.Tenant) {
	ns := t.Namespace
	nsKey := engine.Key{Kind: "Namespace", Name: ns}
	sens := tenantSensitive(t)

	nsObj := newObject("v1", "Namespace", "", ns, c.stack, t.Address)
	labels := nsObj.Object["metadata"].(map[string]any)["labels"].(map[string]any)
	for k, v := range t.Labels {
		if k != engine.LabelManagedBy && k != engine.LabelStack {
			labels[k] = v
		}
	}
	if t.Protect {
		nsObj.Object["metadata"].(map[string]any)["annotations"].(map[string]any)[engine.AnnotProtect] = "true"
	}
	if t.DefaultPriority != nil {
		nsObj.Object["metadata"].(map[string]any)["annotations"].(map[string]any)["gpuform.dev/default-priority"] = t.DefaultPriority.Name
	}
	c.add(t.Address, &engine.Object{Object: nsObj, Sensitive: sens})

	hard := map[string]any{}
	gpuByPool := map[string]map[string]int64{}
	for _, q := range t.Quotas {
		res := engine.QuotaResources(q)
		gpuByPool[q.PoolName] = res
		for r, n := range res {
			key := "requests." + r
			prev, _ := hard[key].(string)
			hard[key] = strconv.FormatInt(parseIntOr0(prev)+n, 10)
		}
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
	if len(hard) > 0 {
		rq := newObject("v1", "ResourceQuota", ns, engine.QuotaName, c.stack, t.Address)
		rq.Object["spec"] = map[string]any{"hard": hard}
		c.add(t.Address, &engine.Object{Object: rq, DependsOn: []engine.Key{nsKey}, Sensitive: sens})
	}

	for _, rb := range []struct {
		name, role string
		subjects   []string
	}{{"gpuform-admins", "admin", t.Admins}, {"gpuform-editors", "edit", t.Editors}, {"gpuform-viewers", "view", t.Viewers}} {
		if len(rb.subjects) == 0 {
			continue
		}
		o := newObject("rbac.authorization.k8s.io/v1", "RoleBinding", ns, rb.name, c.stack, t.Address)
		o.Object["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": rb.role}
		subs := make([]any, 0, len(rb.subjects))
		for _, s := range rb.subjects {
			subs = append(subs, subject(s))
		}
		o.Object["subjects"] = subs
		c.add(t.Address, &engine.Object{Object: o, DependsOn: []engine.Key{nsKey}, Sensitive: sens})
	}

	if len(t.Priorities) > 0 {
		// The stack's one ValidatingAdmissionPolicy reads the allowed
		// priority classes from this annotation (see prioritiesPolicy).
		names := make([]string, len(t.Priorities))
		for i, p := range t.Priorities {
			names[i] = p.Name
		}
		sort.Strings(names)
		nsObj.Object["metadata"].(map[string]any)["annotations"].(map[string]any)[engine.AnnotPriorities] = strings.Join(names, ",")
		c.enforcePriorities = true
	}

	switch {
	case c.kueue():
		c.clusterQueue(t, gpuByPool)
	case c.volcano():
		c.volcanoQueue(t, gpuByPool)
	}
}

// limitResource maps a borrowing/lending limit key (a profile or "gpus") to its resource.
func limitResource(key string) string {
	if key == "gpus" {
		return engine.ResourceGPU
	}
	return engine.MIGResource(key)
}

func (c *compiler) clusterQueue(t *config.Tenant, byPool map[string]map[string]int64) {
	ns := t.Namespace
	covered := map[string]bool{}
	for _, res := range byPool {
		for r := range res {
			covered[r] = true
		}
	}
	resources := sortedStrings(covered)
	var flavors []any
	var deps []engine.Key
	for _, q := range t.Quotas {
		res := byPool[q.PoolName]
		borrow, lend := map[string]int64{}, map[string]int64{}
		for k, v := range q.BorrowingLimit {
			borrow[limitResource(k)] = int64(v)
		}
		for k, v := range q.LendingLimit {
			lend[limitResource(k)] = int64(v)
		}
		var rs []any
		for _, r := range resources {
			e := map[string]any{"name": r, "nominalQuota": strconv.FormatInt(res[r], 10)}
			if v, ok := borrow[r]; ok {
				e["borrowingLimit"] = strconv.FormatInt(v, 10)
			}
			if v, ok := lend[r]; ok {
				e["lendingLimit"] = strconv.FormatInt(v, 10)
			}
			rs = append(rs, e)
		}
		flavors = append(flavors, map[string]any{"name": q.PoolName, "resources": rs})
		deps = append(deps, engine.Key{Group: "kueue.x-k8s.io", Kind: "ResourceFlavor", Name: q.PoolName})
	}
	spec := map[string]any{
		"cohortName":        t.Cohort,
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
	}
	if len(flavors) > 0 {
		cov := make([]any, len(resources))
		for i, r := range resources {
			cov[i] = r
		}
		spec["resourceGroups"] = []any{map[string]any{"coveredResources": cov, "flavors": flavors}}
	}
	cq := newObject("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", ns, c.stack, t.Address)
	cq.Object["spec"] = spec
	c.add(t.Address, &engine.Object{Object: cq, DependsOn: deps, Sensitive: tenantSensitive(t)})
	lq := newObject("kueue.x-k8s.io/v1beta2", "LocalQueue", ns, engine.LocalQueueName, c.stack, t.Address)
	lq.Object["spec"] = map[string]any{"clusterQueue": ns}
	c.add(t.Address, &engine.Object{Object: lq, DependsOn: []engine.Key{{Kind: "Namespace", Name: ns}, {Group: "kueue.x-k8s.io", Kind: "ClusterQueue", Name: ns}}, Sensitive: tenantSensitive(t)})
}

func (c *compiler) volcanoQueue(t *config.Tenant, byPool map[string]map[string]int64) {
	capability := map[string]any{}
	total := map[string]int64{}
	for _, res := range byPool {
		for r, n := range res {
			total[r] += n
		}
	}
	for r, n := range total {
		capability[r] = strconv.FormatInt(n, 10)
	}
	if t.CPU != "" {
		capability["cpu"] = t.CPU
	}
	if t.Memory != "" {
		capability["memory"] = t.Memory
	}
	q := newObject("scheduling.volcano.sh/v1beta1", "Queue", "", t.Namespace, c.stack, t.Address)
	spec := map[string]any{"weight": int64(t.Weight), "reclaimable": t.Reclaimable}
	if len(capability) > 0 {
		spec["capability"] = capability
	}
	q.Object["spec"] = spec
	c.add(t.Address, &engine.Object{Object: q, Sensitive: tenantSensitive(t)})
}

func (c *compiler) model(m *config.Model) {
	if m.Tenant == nil || m.Pool == nil {
		return
	}
	ns := m.Tenant.Namespace
	resource, count := engine.ResourceGPU, int64(m.GPUs)
	if m.Slice != "" {
		resource, count = engine.MIGResource(m.Slice), 1
	}
	qty := strconv.FormatInt(count, 10)
	modelSpec := map[string]any{
		"modelFormat": map[string]any{"name": m.Format},
		"storageUri":  m.StorageURI,
		"resources": map[string]any{
			"limits":   map[string]any{resource: qty},
			"requests": map[string]any{resource: qty},
		},
	}
	if m.Runtime != "" {
		modelSpec["runtime"] = m.Runtime
	}
	predictor := map[string]any{
		"minReplicas":  int64(m.MinReplicas),
		"maxReplicas":  int64(m.MaxReplicas),
		"nodeSelector": map[string]any{engine.LabelPool: m.Pool.Name},
		"model":        modelSpec,
	}
	deps := []engine.Key{{Kind: "Namespace", Name: ns}}
	prio := m.Priority
	if prio == nil {
		prio = m.Tenant.DefaultPriority
	}
	if prio != nil {
		predictor["priorityClassName"] = prio.Name
		deps = append(deps, engine.Key{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: prio.Name})
	}
	isvc := newObject("serving.kserve.io/v1beta1", "InferenceService", ns, m.Name, c.stack, m.Address)
	meta := isvc.Object["metadata"].(map[string]any)
	meta["annotations"].(map[string]any)["serving.kserve.io/deploymentMode"] = m.DeploymentMode
	if c.kueue() {
		labels := meta["labels"].(map[string]any)
		labels["kueue.x-k8s.io/queue-name"] = engine.LocalQueueName
		deps = append(deps, engine.Key{Group: "kueue.x-k8s.io", Kind: "LocalQueue", Namespace: ns, Name: engine.LocalQueueName})
		if prio != nil {
			labels["kueue.x-k8s.io/priority-class"] = prio.Name
			deps = append(deps, engine.Key{Group: "kueue.x-k8s.io", Kind: "WorkloadPriorityClass", Name: prio.Name})
		}
	}
	if m.Slice != "" && c.cfg.Settings.MIGBackend == config.BackendGPUOperator {
		deps = append(deps, engine.Key{Kind: "ConfigMap", Namespace: c.cfg.Settings.GPUOperatorNamespace, Name: engine.MIGPartedConfig})
	}
	isvc.Object["spec"] = map[string]any{"predictor": predictor}
	c.add(m.Address, &engine.Object{Object: isvc, DependsOn: deps, Sensitive: anySensitive(&m.Meta)})
}

// subject converts "user:x", "group:x" or "serviceaccount:ns:name" to an RBAC subject.
func subject(s string) map[string]any {
	kind, name, _ := strings.Cut(s, ":")
	switch kind {
	case "group":
		return map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}
	case "serviceaccount":
		ns, sa, _ := strings.Cut(name, ":")
		return map[string]any{"kind": "ServiceAccount", "namespace": ns, "name": sa}
	}
	return map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}
}

func anySensitive(m *config.Meta) bool { return len(m.Sensitive) > 0 }

// tenantSensitive reports whether a tenant or any of its quota blocks holds
// a value of a sensitive variable.
func tenantSensitive(t *config.Tenant) bool {
	if anySensitive(&t.Meta) {
		return true
	}
	for _, q := range t.Quotas {
		if anySensitive(&q.Meta) {
			return true
		}
	}
	return false
}

func parseIntOr0(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func sortedStrings(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// newObject starts an unstructured object with the ownership metadata.
func newObject(apiVersion, kind, namespace, name, stack, address string) *unstructured.Unstructured {
	meta := map[string]any{
		"name": name,
		"labels": map[string]any{
			engine.LabelManagedBy: engine.ManagedByValue,
			engine.LabelStack:     stack,
		},
		"annotations": map[string]any{
			engine.AnnotAddress: address,
		},
	}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   meta,
	}}
}
