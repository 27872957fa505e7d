package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// BlockSchema describes one block type of the language.
type BlockSchema struct {
	// Type is the block type keyword.
	Type string
	// Labels names the block's labels.
	Labels []string
	// Repeatable is true for resource blocks, which take for_each and count.
	Repeatable bool
	// Attrs are the block's arguments.
	Attrs []AttrSchema
	// Blocks are the nested block types.
	Blocks []BlockSchema
	// Many is true for nested blocks that may appear more than once.
	Many bool
}

// AttrSchema describes one argument of a block.
type AttrSchema struct {
	// Name is the argument's name.
	Name string
	// Type is the type its value converts to; cty.DynamicPseudoType for
	// references and for a variable's type and default.
	Type cty.Type
	// Required is true when the block must set the argument.
	Required bool
	// Ref names the block type the argument refers to ("priority"); RefList is
	// true when it takes a list of such references.
	Ref     string
	RefList bool
	// Default documents the value used when the argument is absent.
	Default string
	// Hideable is true when every output can hide the value: it goes only
	// into fields of the objects of its block, which outputs show as
	// (sensitive), never into a name, namespace, label, annotation, node
	// setting, shared object or figure of the capacity table. Only a
	// hideable argument may take a value derived from a sensitive variable.
	Hideable bool
}

// attr is shorthand for an optional argument.
func attr(name string, t cty.Type, def string) AttrSchema {
	return AttrSchema{Name: name, Type: t, Default: def}
}

// required is shorthand for a required argument.
func required(name string, t cty.Type) AttrSchema {
	return AttrSchema{Name: name, Type: t, Required: true}
}

// hideable marks a as hideable (see AttrSchema.Hideable).
func hideable(a AttrSchema) AttrSchema {
	a.Hideable = true
	return a
}

// ref is shorthand for an argument that refers to another block.
func ref(name, target string, req bool) AttrSchema {
	return AttrSchema{Name: name, Type: cty.DynamicPseudoType, Ref: target, Required: req}
}

var (
	numberMap = cty.Map(cty.Number)
	stringMap = cty.Map(cty.String)
	strList   = cty.List(cty.String)
)

// Block type keywords.
const (
	TypeGpuform   = "gpuform"
	TypeCluster   = "cluster"
	TypeVariable  = "variable"
	TypeLocals    = "locals"
	TypePriority  = "priority"
	TypeMIGLayout = "mig_layout"
	TypePool      = "pool"
	TypeTenant    = "tenant"
	TypeModel     = "model"
	TypeAlert     = "alert"
	// TypeDepartment is a node of the organisation tree (department.go).
	TypeDepartment = "department"
)

// alertsBlock is the alerts block of a pool (tenant false) or a tenant:
// gpuform's built-in alerts, their thresholds and which are off.
func alertsBlock(tenant bool) BlockSchema {
	attrs := []AttrSchema{
		attr("utilization_below", cty.Number, "30 (percent)"),
		attr("utilization_for", cty.String, `"15m"`),
		attr("memory_above", cty.Number, "90 (percent of framebuffer memory)"),
		attr("memory_for", cty.String, `"5m"`),
		attr("temperature_above", cty.Number, "85 (degrees C)"),
		attr("temperature_for", cty.String, `"5m"`),
	}
	if tenant {
		attrs = append(attrs,
			attr("quota_above", cty.Number, "90 (percent of the quota)"),
			attr("quota_for", cty.String, `"15m"`),
			attr("pending_for", cty.String, `"10m"`),
		)
	}
	attrs = append(attrs,
		attr("disabled", strList, "[] (every alert on)"),
		attr("labels", stringMap, "{}"),
	)
	return BlockSchema{Type: "alerts", Attrs: attrs}
}

// Schema returns the language: every block type with its arguments and nested blocks.
func Schema() []BlockSchema {
	return []BlockSchema{
		{Type: TypeGpuform, Attrs: []AttrSchema{
			required("stack", cty.String),
			attr("scheduler", cty.String, `"none"`),
			attr("mig_backend", cty.String, `"gpu-operator"`),
			attr("gpu_operator_namespace", cty.String, `"gpu-operator"`),
			attr("pin_drivers", cty.Bool, "false"),
			attr("alerts_namespace", cty.String, `"monitoring"`),
			attr("alerts_labels", stringMap, "{}"),
		}},
		{Type: TypeCluster, Attrs: []AttrSchema{
			attr("kubeconfig", cty.String, "$KUBECONFIG, then ~/.kube/config"),
			attr("context", cty.String, "the kubeconfig's current context"),
			attr("simulated", cty.String, "none (a real cluster)"),
			attr("labels", stringMap, "{} (a named cluster block only)"),
			attr("values", cty.DynamicPseudoType, "{} (a named cluster block only)"),
			attr("role", cty.String, `none (a worker; a named cluster block only)`),
			attr("kubeconfig_secret", cty.String, "none (a named cluster block only)"),
		}},
		{Type: TypeVariable, Labels: []string{"name"}, Attrs: []AttrSchema{
			attr("type", cty.DynamicPseudoType, "any"),
			attr("default", cty.DynamicPseudoType, "none (the variable is required)"),
			attr("description", cty.String, `""`),
			attr("sensitive", cty.Bool, "false"),
			attr("nullable", cty.Bool, "true"),
		}, Blocks: []BlockSchema{
			{Type: "validation", Many: true, Attrs: []AttrSchema{
				required("condition", cty.Bool),
				required("error_message", cty.String),
			}},
		}},
		{Type: TypeLocals},
		{Type: TypePriority, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
			hideable(required("value", cty.Number)),
			hideable(attr("preemption", cty.String, `"PreemptLowerPriority"`)),
			hideable(attr("description", cty.String, `""`)),
		}},
		{Type: TypeMIGLayout, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
			required("gpu", cty.String),
			attr("slices", numberMap, "none (use device blocks)"),
		}, Blocks: []BlockSchema{
			{Type: "device", Many: true, Attrs: []AttrSchema{
				required("indexes", cty.List(cty.Number)),
				attr("slices", numberMap, "{}"),
				attr("enabled", cty.Bool, "true"),
			}},
		}},
		poolSchema(),
		departmentSchema(),
		tenantSchema(),
		modelSchema(),
		alertSchema(),
	}
}

// poolSchema is the pool block: a group of GPU nodes and how their GPUs are shared.
func poolSchema() BlockSchema {
	return BlockSchema{Type: TypePool, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
		required("gpu", cty.String),
		attr("node_selector", stringMap, `{ "gpuform.dev/node-group" = <pool name> }`),
		ref("mig_layout", TypeMIGLayout, false),
		attr("overcommit", cty.Number, "1.0"),
		attr("max_unavailable", cty.Number, "1"),
		attr("driver_version", cty.String, "any"),
		attr("mode", cty.String, `"device_plugin"`),
		attr("price_per_gpu_hour", cty.Number, "0 (no cost)"),
		attr("currency", cty.String, `"USD"`),
		placementClusters(), placementSelector(),
	}, Blocks: []BlockSchema{
		{Type: "time_slicing", Attrs: sharingAttrs("false")},
		{Type: "mps", Attrs: sharingAttrs("true")},
		alertsBlock(false),
		{Type: "taint", Many: true, Attrs: []AttrSchema{
			required("key", cty.String),
			attr("value", cty.String, `""`),
			attr("effect", cty.String, `"NoSchedule"`),
		}},
	}}
}

// tenantSchema is the tenant block: a namespace, its quotas, access and alerts.
func tenantSchema() BlockSchema {
	return BlockSchema{Type: TypeTenant, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
		attr("namespace", cty.String, "the tenant's name"),
		attr("labels", stringMap, "{}"),
		hideable(attr("cohort", cty.String, "the stack (in a department: the department's name)")),
		ref("department", TypeDepartment, false),
		hideable(attr("weight", cty.Number, "1")),
		hideable(attr("reclaimable", cty.Bool, "true")),
		hideable(attr("cpu", cty.String, "no limit")),
		hideable(attr("memory", cty.String, "no limit")),
		hideable(attr("pods", cty.Number, "no limit")),
		{Name: "priorities", Type: cty.DynamicPseudoType, Ref: TypePriority, RefList: true, Default: "[] (any priority)"},
		ref("default_priority", TypePriority, false),
		hideable(attr("admins", strList, "[]")),
		hideable(attr("editors", strList, "[]")),
		hideable(attr("viewers", strList, "[]")),
		attr("protect", cty.Bool, "true"),
		attr("runtime_class", cty.DynamicPseudoType, "none (any runtime)"),
		placementClusters(), placementSelector(),
		attr("dispatch", cty.String, "none (the tenant's jobs run where they are submitted)"),
	}, Blocks: []BlockSchema{
		{Type: "quota", Labels: []string{"pool"}, Many: true, Attrs: []AttrSchema{
			attr("slices", numberMap, "{}"),
			attr("gpus", cty.Number, "0"),
			attr("borrowing_limit", numberMap, "no limit"),
			attr("lending_limit", numberMap, "no limit"),
		}},
		alertsBlock(true),
	}}
}

// modelSchema is the model block: a served model on a pool.
func modelSchema() BlockSchema {
	return BlockSchema{Type: TypeModel, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
		ref("tenant", TypeTenant, true),
		ref("pool", TypePool, true),
		attr("slice", cty.String, "none (whole GPUs)"),
		attr("gpus", cty.Number, "1 on a pool without MIG"),
		hideable(required("format", cty.String)),
		hideable(attr("runtime", cty.String, "KServe picks one")),
		attr("deployment_mode", cty.String, `"Standard"`),
		hideable(required("storage_uri", cty.String)),
		attr("replicas", cty.ObjectWithOptionalAttrs(map[string]cty.Type{"min": cty.Number, "max": cty.Number}, []string{"min", "max"}), "{ min = 1, max = 1 }"),
		ref("priority", TypePriority, false),
		hideable(attr("env", stringMap, "{}")),
		placementClusters(), placementSelector(),
	}, Blocks: []BlockSchema{autoscalingBlock()}}
}

// placementClusters and placementSelector are the placement arguments of
// pools, tenants and models in a fleet (placement.go).
func placementClusters() AttrSchema {
	return attr(argClusters, strList, "see placement (a fleet only)")
}

func placementSelector() AttrSchema {
	return attr(argClusterSelector, stringMap, "see placement (a fleet only)")
}

// autoscalingBlock is a model's autoscaling block.
func autoscalingBlock() BlockSchema {
	return BlockSchema{Type: "autoscaling", Attrs: []AttrSchema{
		attr("gpu_utilization", cty.Number, "none (query sets the metric)"),
		attr("query", cty.String, "none (gpu_utilization sets the metric)"),
		attr("target", cty.Number, "gpu_utilization"),
		attr("prometheus", cty.String, "KServe's default Prometheus"),
		attr("cooldown", cty.Number, "300"),
	}}
}

// alertSchema is the alert block: an operator's own alerting rule.
func alertSchema() BlockSchema {
	return BlockSchema{Type: TypeAlert, Labels: []string{"name"}, Repeatable: true, Attrs: []AttrSchema{
		required("expr", cty.String),
		attr("for", cty.String, `"0s"`),
		attr("severity", cty.String, `"warning"`),
		attr("labels", stringMap, "{}"),
		attr("annotations", stringMap, "{}"),
	}}
}

// sharingAttrs are the arguments of a pool's time_slicing and mps blocks,
// the NVIDIA device plugin's sharing.timeSlicing and sharing.mps: failOne
// is the default of fail_requests_greater_than_one (the plugin's default
// for the strategy).
func sharingAttrs(failOne string) []AttrSchema {
	return []AttrSchema{
		required("replicas", cty.Number),
		attr("rename_by_default", cty.Bool, "false"),
		attr("fail_requests_greater_than_one", cty.Bool, failOne),
	}
}

// metaArgs are the arguments every repeatable block takes besides its own.
var metaArgs = []string{"for_each", "count"}

// hclSchema converts a BlockSchema into the hcl.BodySchema that decodes its body.
func (b *BlockSchema) hclSchema() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, a := range b.Attrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a.Name, Required: a.Required})
	}
	if b.Repeatable {
		for _, m := range metaArgs {
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: m})
		}
	}
	for _, nb := range b.Blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: nb.Type, LabelNames: nb.Labels})
	}
	return s
}

// bodySchema is b.hclSchema(), built once per load: every instance of
// every block decodes its body with it.
func (l *loader) bodySchema(b *BlockSchema) *hcl.BodySchema {
	return l.caches.bodySchema(b)
}

// schemaIndex maps block types to their schema.
type schemaIndex map[string]*BlockSchema

func newSchemaIndex() schemaIndex {
	idx := schemaIndex{}
	for _, b := range Schema() {
		b := b
		idx[b.Type] = &b
	}
	return idx
}

// topSchema is the schema of a configuration file.
func (idx schemaIndex) topSchema() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, b := range Schema() {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: b.Type, LabelNames: b.Labels})
	}
	return s
}

// isResourceType reports whether blocks of type t can be referenced by address.
func isResourceType(t string) bool {
	switch t {
	case TypePriority, TypeMIGLayout, TypePool, TypeDepartment, TypeTenant, TypeModel, TypeAlert:
		return true
	}
	return false
}
