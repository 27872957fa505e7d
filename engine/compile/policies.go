package compile

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// The stack's admission policies: one ValidatingAdmissionPolicy per rule,
// each serving every tenant by reading what the tenant may use from its
// Namespace (tenancyAnnotations), bound to the namespaces labelled with the
// stack. A Namespace without the annotations allows nothing.

// podRule matches pod creation; configMapRule the creation of the probe
// ConfigMaps (LabelAdmissionProbe) that show a policy is enforced.
var (
	podRule = map[string]any{
		"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"},
	}
	configMapRule = map[string]any{
		"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"},
	}
)

// celList is the CEL expression of the comma-separated list in annotation
// key of the request's Namespace; an empty list when it is absent.
func celList(key string) string {
	return fmt.Sprintf("has(namespaceObject.metadata.annotations) && %[1]q in namespaceObject.metadata.annotations && namespaceObject.metadata.annotations[%[1]q] != '' ? namespaceObject.metadata.annotations[%[1]q].split(',') : []", key)
}

// isPod is the CEL condition that the request is for a pod.
const isPod = "request.resource.group == '' && request.resource.resource == 'pods'"

// celRule is one CEL rule of a policy and the message when it fails.
type celRule struct{ expression, message string }

// prioritiesPolicy refuses, in tenant namespaces, pods whose
// priorityClassName is not among the tenant's allowed priorities and any
// object (a Job, a JobSet, a pod: whatever Kueue manages) that sets or
// changes Kueue's priority-class label to a priority not among them.
// system-* classes are never allowed.
func (c *compiler) prioritiesPolicy() {
	notAllowed := "' is not among the priorities of namespace ' + namespaceObject.metadata.name + ' (' + variables.allowed.join(', ') + '; gpuform ' + namespaceObject.metadata.annotations[%q] + ')'"
	label := fmt.Sprintf("object.metadata.labels[%q]", engine.LabelKueuePriority)
	hasLabel := fmt.Sprintf("has(object.metadata.labels) && %q in object.metadata.labels", engine.LabelKueuePriority)
	oldLabel := fmt.Sprintf("oldObject != null && has(oldObject.metadata.labels) && %[1]q in oldObject.metadata.labels && oldObject.metadata.labels[%[1]q] == %[2]s", engine.LabelKueuePriority, label)
	c.namespacePolicy("priorities",
		[]any{map[string]any{
			// Every namespaced kind (a cluster-scoped object would meet
			// the policy with no namespace at all), not its subresources.
			"apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"*"}, "scope": "Namespaced",
		}},
		[]any{map[string]any{"name": "allowed", "expression": celList(engine.AnnotPriorities)}},
		celRule{
			fmt.Sprintf("!(%s) || !has(object.spec.priorityClassName) || (!object.spec.priorityClassName.startsWith('system-') && object.spec.priorityClassName in variables.allowed)", isPod),
			"'priority class ' + object.spec.priorityClassName + " + fmt.Sprintf(notAllowed, engine.AnnotAddress),
		},
		// An object that keeps the label it had passes: narrowing a
		// tenant's priorities must not stop controllers updating what
		// already runs (plan warns of those).
		celRule{
			fmt.Sprintf("!(%s) || (%s) || %s in variables.allowed", hasLabel, oldLabel, label),
			fmt.Sprintf("'Kueue priority class ' + %s + ", label) + fmt.Sprintf(notAllowed, engine.AnnotAddress),
		},
	)
}

// poolsPolicy refuses, in tenant namespaces, pods that ask for any
// nvidia.com/ resource without selecting (nodeSelector gpuform.dev/pool) a
// pool where the tenant has quota for that resource. With the tenant's
// ResourceQuota, which names every GPU resource of the stack, this bounds a
// tenant's GPUs per pool: under schedulers none and volcano, validate
// refuses a tenant with quota for one resource on two pools, so the quota
// of a resource is the quota of the one pool its pods may select. Under
// Kueue, whose ClusterQueue counts each pool (flavor) apart, a pod Kueue
// holds (its admission scheduling gate) passes without a pool: Kueue
// chooses one of the tenant's flavors when it lifts the gate; and only an
// identity that may write Kueue's Workload status (Kueue, an administrator)
// may lift that gate or resume a suspended Job, so no tenant gets round
// Kueue's accounting.
func (c *compiler) poolsPolicy() {
	resourcesOK := "(!has(c.resources.%[1]s) || c.resources.%[1]s.all(r, !r.startsWith('nvidia.com/') || (variables.pool + '=' + r) in variables.allowed))"
	podOK := fmt.Sprintf("(object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])).all(c, !has(c.resources) || (%s && %s))",
		fmt.Sprintf(resourcesOK, "requests"), fmt.Sprintf(resourcesOK, "limits"))
	rules := []any{podRule, configMapRule}
	var kueueRules []celRule
	if c.cfg.Settings.Scheduler == config.SchedulerKueue {
		gated := fmt.Sprintf("has(%%[1]s.spec.schedulingGates) && %%[1]s.spec.schedulingGates.exists(g, g.name == %q)", kueueAdmissionGate)
		podOK = fmt.Sprintf("(%s) || %s", fmt.Sprintf(gated, "object"), podOK)
		mayAdmit := "authorizer.group('" + engine.KindClusterQueue.Group + "').resource('workloads').subresource('status').namespace(namespaceObject.metadata.name).check('update').allowed()"
		rules = append(rules,
			map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"UPDATE"}, "resources": []any{"pods"}},
			map[string]any{"apiGroups": []any{"batch"}, "apiVersions": []any{"v1"}, "operations": []any{"UPDATE"}, "resources": []any{"jobs"}})
		kueueRules = []celRule{
			{
				fmt.Sprintf("request.operation != 'UPDATE' || !(%s) || !(%s) || (%s) || %s", isPod, fmt.Sprintf(gated, "oldObject"), fmt.Sprintf(gated, "object"), mayAdmit),
				fmt.Sprintf("'only Kueue lifts the scheduling gate %s of pods in namespace ' + namespaceObject.metadata.name + ' (gpuform ' + namespaceObject.metadata.annotations[%q] + ')'", kueueAdmissionGate, engine.AnnotAddress),
			},
			{
				"request.resource.group != 'batch' || request.operation != 'UPDATE' || !has(oldObject.spec.suspend) || !oldObject.spec.suspend || (has(object.spec.suspend) && object.spec.suspend) || " + mayAdmit,
				fmt.Sprintf("'only Kueue resumes a suspended Job in namespace ' + namespaceObject.metadata.name + ' (gpuform ' + namespaceObject.metadata.annotations[%q] + ')'", engine.AnnotAddress),
			},
		}
	}
	pods := celRule{
		fmt.Sprintf("!(%s) || request.operation != 'CREATE' || %s", isPod, podOK),
		fmt.Sprintf("'pods in namespace ' + namespaceObject.metadata.name + ' may ask for nvidia.com/ resources only with nodeSelector %s naming a pool the tenant has quota on for them (' + (variables.allowed.size() == 0 ? 'none' : variables.allowed.join(', ')) + '; gpuform ' + namespaceObject.metadata.annotations[%q] + ')'", engine.LabelPool, engine.AnnotAddress),
	}
	c.namespacePolicy("gpu-pools", rules,
		[]any{
			map[string]any{"name": "allowed", "expression": celList(engine.AnnotGPUPools)},
			map[string]any{"name": "pool", "expression": fmt.Sprintf("has(object.spec.nodeSelector) && %[1]q in object.spec.nodeSelector ? object.spec.nodeSelector[%[1]q] : ''", engine.LabelPool)},
		},
		append([]celRule{pods}, kueueRules...)...,
	)
}

// kueueAdmissionGate is the scheduling gate Kueue puts on the pods it
// manages until it admits them.
const kueueAdmissionGate = "kueue.x-k8s.io/admission"

// namespacePolicy adds a ValidatingAdmissionPolicy of the stack, named
// gpuform-<stack>-<suffix>, and its binding to the stack's namespaces:
// requests that rules match must pass every validation. Every policy also
// denies the creation of a ConfigMap labelled LabelAdmissionProbe with its
// name, so that apply can see it enforced (rules must match that creation).
func (c *compiler) namespacePolicy(suffix string, rules, variables []any, validations ...celRule) {
	name := "gpuform-" + c.stack + "-" + suffix
	probe := celRule{
		fmt.Sprintf("!has(object.metadata.labels) || !(%[1]q in object.metadata.labels) || object.metadata.labels[%[1]q] != %[2]q", engine.LabelAdmissionProbe, name),
		fmt.Sprintf("'gpuform admission probe %s: enforced in namespace ' + namespaceObject.metadata.name", name),
	}
	vs := make([]any, 0, len(validations)+1)
	for _, v := range append(validations, probe) {
		vs = append(vs, map[string]any{"expression": v.expression, "messageExpression": v.message})
	}
	spec := map[string]any{
		"failurePolicy":    "Fail",
		"matchConstraints": map[string]any{"resourceRules": rules},
		"validations":      vs,
	}
	if len(variables) > 0 {
		spec["variables"] = variables
	}
	vap := newObject(engine.KindVAP, "", name, c.stack, engine.StackAddress)
	vap.Object["spec"] = spec
	c.add(engine.StackAddress, &engine.Object{Object: vap})
	bind := newObject(engine.KindVAPBinding, "", name, c.stack, engine.StackAddress)
	bind.Object["spec"] = map[string]any{
		"policyName":        name,
		"validationActions": []any{"Deny"},
		"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{
			engine.LabelStack: c.stack,
		}}},
	}
	c.add(engine.StackAddress, &engine.Object{Object: bind, DependsOn: []engine.Key{engine.KeyFor(engine.KindVAP, "", name)}})
}

// defaultPriorityPolicies add, for each priority that is a tenant's
// default_priority, two MutatingAdmissionPolicies bound to the namespaces
// whose LabelDefaultPriority names it: a pod created without a priority
// class gets the priority's class, value and preemption policy (the
// Priority admission plugin ran before and gave it 0), and a Job created
// without one in its pod template gets the class there, which its pods and
// Kueue's workload (for a Job without Kueue's priority-class label) take.
func (c *compiler) defaultPriorityPolicies() {
	names := slices.Sorted(maps.Keys(c.defaultPriorities))
	for _, n := range names {
		p := c.defaultPriorities[n]
		c.mutatingPolicy(p, "pods", map[string]any{
			"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"},
		}, "!has(object.spec.priorityClassName)",
			fmt.Sprintf("Object{spec: Object.spec{priorityClassName: %q, priority: %d, preemptionPolicy: %q}}", p.Name, p.Value, p.Preemption))
		c.mutatingPolicy(p, "jobs", map[string]any{
			"apiGroups": []any{"batch"}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"jobs"},
		}, "!has(object.spec.template.spec.priorityClassName)",
			fmt.Sprintf("Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{priorityClassName: %q}}}}", p.Name))
	}
}

// mutatingPolicy adds the MutatingAdmissionPolicy
// gpuform-<stack>-default-<priority>-<suffix> and its binding to the
// stack's namespaces whose default priority is p: requests rule matches
// and condition holds for are patched with applyConfiguration.
func (c *compiler) mutatingPolicy(p *config.Priority, suffix string, rule map[string]any, condition, applyConfiguration string) {
	name := "gpuform-" + c.stack + "-default-" + p.Name + "-" + suffix
	mp := newObject(engine.KindMAP, "", name, c.stack, engine.StackAddress)
	mp.Object["spec"] = map[string]any{
		"failurePolicy":      "Fail",
		"reinvocationPolicy": "Never",
		"matchConstraints":   map[string]any{"resourceRules": []any{rule}},
		"matchConditions":    []any{map[string]any{"name": "names-no-priority", "expression": condition}},
		"mutations": []any{map[string]any{
			"patchType":          "ApplyConfiguration",
			"applyConfiguration": map[string]any{"expression": applyConfiguration},
		}},
	}
	prio := engine.KeyFor(engine.KindPriorityClass, "", p.Name)
	c.add(engine.StackAddress, &engine.Object{Object: mp, DependsOn: []engine.Key{prio}})
	bind := newObject(engine.KindMAPBinding, "", name, c.stack, engine.StackAddress)
	bind.Object["spec"] = map[string]any{
		"policyName": name,
		"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{
			engine.LabelStack: c.stack, engine.LabelDefaultPriority: p.Name,
		}}},
	}
	c.add(engine.StackAddress, &engine.Object{Object: bind, DependsOn: []engine.Key{engine.KeyFor(engine.KindMAP, "", name)}})
}
