package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Config is one evaluated gpuform configuration: every block of one directory,
// with variables resolved, for_each/count expanded and references linked.
//
// The config tags of Config and of the block types name the block or
// attribute each field holds, and Flatten reads them (see the package documentation): a field
// of a block type holds the evaluated value of the attribute its tag names,
// which docs/language.md describes.
type Config struct {
	// Dir is the directory the configuration was read from ("." for an fs.FS root).
	Dir string `config:"-"`
	// Files holds the parsed files by name, for diagnostics with source snippets.
	Files map[string]*hcl.File `config:"-"`
	// Hash is a SHA-256 over every input: files, --var values and
	// GPUFORM_VAR_ variables; saved plans record it.
	Hash string `config:"-"`
	// Settings is the gpuform block.
	Settings *Settings `config:"gpuform,block"`
	// Cluster is the cluster block; a zero Cluster when the configuration has none.
	Cluster *Cluster `config:"cluster,block,omitempty"`
	// Variables are the declared input variables with their final values.
	Variables []*Variable `config:"variable,block"`
	// Priorities, MIGLayouts, Pools, Tenants and Models are the resource block
	// instances in source order (for_each instances in key order, count in index order).
	Priorities []*Priority  `config:"priority,block"`
	MIGLayouts []*MIGLayout `config:"mig_layout,block"`
	Pools      []*Pool      `config:"pool,block"`
	Tenants    []*Tenant    `config:"tenant,block"`
	Models     []*Model     `config:"model,block"`
	// Alerts are the alert blocks: operators' own alerting rules.
	Alerts []*Alert `config:"alert,block"`

	// Departments are the department blocks: the organisation tree that
	// tenants are grouped into (department.go).
	Departments []*Department `config:"department,block"`

	// Fleet is every named cluster block ("cluster \"NAME\" {...}") in
	// source order; empty for a single-cluster configuration. A
	// configuration evaluated for one member of a fleet has that member as
	// Cluster and keeps only what is placed on it.
	Fleet []*Cluster `config:"-"`
	// FlavorPools are, in the configuration evaluated for a fleet's
	// MultiKueue manager, the pools a dispatched tenant has quota in on a
	// worker that are not placed on the manager (fleet_dispatch.go): the
	// manager compiles their ResourceFlavor only, for the tenant's
	// ClusterQueue to name. Empty otherwise.
	FlavorPools []*Pool `config:"-"`
}

// Meta is what every evaluated block instance carries: its address, the
// Kubernetes-facing name and the source range of every attribute.
type Meta struct {
	// Type is the block type ("tenant").
	Type string
	// Label is the block's label ("team"); empty for unlabelled blocks.
	Label string
	// Key is the for_each key or the count index as a string; empty for a single block.
	Key string
	// Address is the config address: tenant.risk, tenant.team["ocr"], model.m[0].
	Address string
	// Name is the instance's name: the label, or label-key for a for_each/count instance.
	Name string
	// DeclRange is the range of the block header.
	DeclRange hcl.Range
	// ranges are the ranges of the attributes (and nested blocks) written,
	// and of each literal key's item in a map-valued attribute: what
	// Range, KeyRange, HasAttr and AttrRanges answer.
	ranges rangeTable
	// Sensitive names the attributes whose value derives from a sensitive variable.
	Sensitive map[string]bool
}

// Range returns the source range of attribute attr, or the block header when
// the attribute was not written (a default).
func (m *Meta) Range(attr string) hcl.Range {
	if r, ok := m.ranges.get(attr, "", false); ok {
		return r
	}
	return m.DeclRange
}

// KeyRange returns the source range of key in map attribute attr, falling back
// to the attribute's range when the key was not a literal.
func (m *Meta) KeyRange(attr, key string) hcl.Range {
	if r, ok := m.ranges.get(attr, key, true); ok {
		return r
	}
	return m.Range(attr)
}

// IsSensitive reports whether attribute attr carries a sensitive value.
func (m *Meta) IsSensitive(attr string) bool { return m.Sensitive[attr] }

// HasAttr reports whether attribute attr was written in the source.
func (m *Meta) HasAttr(attr string) bool {
	_, ok := m.ranges.get(attr, "", false)
	return ok
}

// Settings is the gpuform block: the stack and how GPUs are driven.
type Settings struct {
	Meta
	Stack                string `config:"stack"`
	Scheduler            string `config:"scheduler"`
	MIGBackend           string `config:"mig_backend"`
	GPUOperatorNamespace string `config:"gpu_operator_namespace"`
	// PinDrivers is true when each pool with an exact driver_version gets
	// a GPU Operator NVIDIADriver that installs that version on its nodes.
	PinDrivers bool `config:"pin_drivers"`
	// AlertsNamespace is where the stack's PrometheusRules go;
	// AlertsLabels are labels on each of them (a Prometheus's ruleSelector).
	AlertsNamespace string            `config:"alerts_namespace"`
	AlertsLabels    map[string]string `config:"alerts_labels,omitempty"`
}

// Scheduler modes.
const (
	SchedulerNone    = "none"
	SchedulerKueue   = "kueue"
	SchedulerVolcano = "volcano"
)

// MIG backends.
const (
	BackendGPUOperator = "gpu-operator"
	BackendAgent       = "agent"
)

// Cluster is the cluster block: which Kubernetes API to talk to.
type Cluster struct {
	Meta
	// Name is the block label of a fleet member; empty for the single
	// unlabelled cluster block.
	Name       string `config:"-"`
	Kubeconfig string `config:"kubeconfig,omitempty"`
	Context    string `config:"context,omitempty"`
	Simulated  string `config:"simulated,omitempty"`
	// Labels are the member's labels, which placement selectors match.
	Labels map[string]string `config:"labels,omitempty"`
	// Values are the member's values, which expressions read as
	// cluster.values while the configuration is evaluated for it (an
	// object; cty.NilVal when not written).
	Values cty.Value `config:"values,omitempty"`
	// Role is "manager" for the fleet's MultiKueue manager cluster, empty
	// for any other member.
	Role string `config:"role,omitempty"`
	// KubeconfigSecret names the Secret, in Kueue's namespace on the
	// manager cluster, holding the kubeconfig MultiKueue uses to reach
	// this member. gpuform never reads its content.
	KubeconfigSecret string `config:"kubeconfig_secret,omitempty"`
}

// Cluster roles.
const (
	RoleManager = "manager"
)

// Variable is a declared input variable and the value it ended with.
type Variable struct {
	Meta
	// Value is the final value (cty.DynamicVal when unusable), marked
	// sensitive when Sensitive: never print it without checking. It is
	// listed as the attribute value, the result of default and type.
	Value       cty.Value `config:"value,sensitiveif=sensitive"`
	Sensitive   bool      `config:"sensitive"`
	Description string    `config:"description,omitempty"`
	// Source says where the value came from: "default", "env", a file name, or "--var".
	Source string `config:"-"`
}

// Priority is a priority block instance.
type Priority struct {
	Meta
	Value       int64  `config:"value"`
	Preemption  string `config:"preemption"`
	Description string `config:"description,omitempty"`
}

// Preemption policies.
const (
	PreemptLowerPriority = "PreemptLowerPriority"
	PreemptNever         = "Never"
)

// MIGLayout is a mig_layout block instance: the MIG profiles on each GPU of a node.
type MIGLayout struct {
	Meta
	GPU string `config:"gpu"`
	// Slices is the profile -> count on every GPU (when Devices is empty).
	Slices map[string]int `config:"slices"`
	// Devices are per device-group layouts, used instead of Slices.
	Devices []*DeviceGroup `config:"device,block"`
}

// DeviceGroup is a device block of a mig_layout: a layout for some GPU indexes.
type DeviceGroup struct {
	Meta
	Indexes []int          `config:"indexes"`
	Enabled bool           `config:"enabled"`
	Slices  map[string]int `config:"slices"`
}

// Pool is a pool block instance: a set of GPU nodes and how they are shared.
type Pool struct {
	Meta
	GPU          string            `config:"gpu"`
	NodeSelector map[string]string `config:"node_selector"`
	MIGLayout    *MIGLayout        `config:"mig_layout,ref,omitempty"`
	TimeSlicing  *Sharing          `config:"time_slicing,block"`
	MPS          *Sharing          `config:"mps,block"`
	Alerts       *PoolAlerts       `config:"alerts,block"`
	// Taints are the taints the pool's nodes carry, which its models
	// tolerate.
	Taints         []*Taint `config:"taint,block"`
	Overcommit     float64  `config:"overcommit"`
	MaxUnavailable int      `config:"max_unavailable"`
	// DriverVersion is a constraint on the nodes' NVIDIA driver, such as
	// ">= 535" or "550.54.15"; empty means any.
	DriverVersion string `config:"driver_version,omitempty"`
	// Mode is how the pool's GPUs reach workloads: PoolModeDevicePlugin
	// (extended resources such as nvidia.com/gpu) or PoolModeDRA (Dynamic
	// Resource Allocation through NVIDIA's DRA driver, one DeviceClass per
	// pool and MIG profile).
	Mode string `config:"mode"`
	// PricePerGPUHour is what one whole GPU of the pool costs per hour in
	// Currency, for gpuform usage; a MIG slice costs its share of it.
	PricePerGPUHour float64 `config:"price_per_gpu_hour"`
	// Currency is the ISO 4217 code of PricePerGPUHour, one per configuration.
	Currency string `config:"currency"`
	// Clusters are the names of the fleet members the pool is placed on,
	// in fleet order; empty for a single-cluster configuration.
	Clusters []string `config:"clusters,omitempty"`
	// ClusterSelector is the cluster_selector argument: the labels of the
	// members the pool is placed on.
	ClusterSelector map[string]string `config:"cluster_selector,omitempty"`
	// place is the placement as written (placement.go).
	place placement `config:"-"`
}

// The values of a pool's mode.
const (
	PoolModeDevicePlugin = "device_plugin"
	PoolModeDRA          = "dra"
)

// DRA reports whether the pool's GPUs are allocated through Dynamic
// Resource Allocation.
func (p *Pool) DRA() bool { return p != nil && p.Mode == PoolModeDRA }

// Sharing is a pool's time_slicing or mps block: each GPU advertised as
// Replicas shared ones by the NVIDIA device plugin.
type Sharing struct {
	Meta
	Replicas int `config:"replicas"`
	// RenameByDefault advertises the replicas as nvidia.com/gpu.shared
	// instead of nvidia.com/gpu.
	RenameByDefault bool `config:"rename_by_default"`
	// FailRequestsGreaterThanOne makes the device plugin refuse a container
	// that asks for more than one replica.
	FailRequestsGreaterThanOne bool `config:"fail_requests_greater_than_one"`
}

// Shared is the pool's time_slicing or mps block, nil when it shares no
// GPU that way (validation refuses a pool with both).
func (p *Pool) Shared() *Sharing {
	if p.MPS != nil {
		return p.MPS
	}
	return p.TimeSlicing
}

// Sharing strategies, as docs and messages name them.
const (
	StrategyTimeSlicing = "time_slicing"
	StrategyMPS         = "mps"
)

// Strategy is "mps" or "time_slicing" for a shared pool, "" otherwise.
func (p *Pool) Strategy() string {
	switch {
	case p.MPS != nil:
		return StrategyMPS
	case p.TimeSlicing != nil:
		return StrategyTimeSlicing
	}
	return ""
}

// Taint is a pool's taint block: a taint every node of the pool carries.
type Taint struct {
	Meta
	Key    string `config:"key"`
	Value  string `config:"value,omitempty"`
	Effect string `config:"effect"`
}

// Taint effects, as Kubernetes spells them.
const (
	EffectNoSchedule       = "NoSchedule"
	EffectPreferNoSchedule = "PreferNoSchedule"
	EffectNoExecute        = "NoExecute"
)

// Tenant is a tenant block instance: a namespace with quotas, priorities and access.
// Department is the department it belongs to (nil for none); in one, its
// Cohort is the department's name.
type Tenant struct {
	Meta
	Namespace       string            `config:"namespace"`
	Labels          map[string]string `config:"labels"`
	Quotas          []*Quota          `config:"quota,block"`
	Alerts          *TenantAlerts     `config:"alerts,block"`
	Cohort          string            `config:"cohort,omitempty"`
	Department      *Department       `config:"department,ref,omitempty"`
	Weight          int               `config:"weight"`
	Reclaimable     bool              `config:"reclaimable"`
	CPU             string            `config:"cpu,omitempty"`
	Memory          string            `config:"memory,omitempty"`
	Pods            int               `config:"pods,omitempty"`
	Priorities      []*Priority       `config:"priorities,ref,omitempty"`
	DefaultPriority *Priority         `config:"default_priority,ref,omitempty"`
	Admins          []string          `config:"admins,omitempty"`
	Editors         []string          `config:"editors,omitempty"`
	Viewers         []string          `config:"viewers,omitempty"`
	Protect         bool              `config:"protect"`
	// RuntimeClasses are the RuntimeClasses the tenant's pods may use; its
	// models use the first. Empty means any.
	RuntimeClasses []string `config:"runtime_class,omitempty"`
	// Clusters are the names of the fleet members the tenant is placed
	// on, in fleet order; empty for a single-cluster configuration.
	Clusters []string `config:"clusters,omitempty"`
	// ClusterSelector is the cluster_selector argument: the labels of the
	// members the tenant may be placed on.
	ClusterSelector map[string]string `config:"cluster_selector,omitempty"`
	// Dispatch is "multikueue" when the tenant's jobs are submitted on the
	// fleet's manager cluster and run on its worker clusters; empty
	// otherwise.
	Dispatch string `config:"dispatch,omitempty"`
	// place is the placement as written (placement.go).
	place placement `config:"-"`
}

// Tenant dispatch modes.
const (
	DispatchMultiKueue = "multikueue"
)

// Quota is a tenant's quota block for one pool.
type Quota struct {
	Meta
	// PoolName is the block label; Pool is the pool it names (nil when unknown).
	PoolName string         `config:"pool,label"`
	Pool     *Pool          `config:"-"`
	Slices   map[string]int `config:"slices"`
	// GPUs is listed unless it is zero while Slices is set: a quota gives
	// slices or whole GPUs.
	GPUs           int            `config:"gpus,alt=slices"`
	BorrowingLimit map[string]int `config:"borrowing_limit"`
	LendingLimit   map[string]int `config:"lending_limit"`
}

// Model is a model block instance: a KServe InferenceService.
type Model struct {
	Meta
	Tenant         *Tenant   `config:"tenant,ref,omitempty"`
	Pool           *Pool     `config:"pool,ref,omitempty"`
	Slice          string    `config:"slice,omitempty"`
	GPUs           int       `config:"gpus,omitempty"`
	Format         string    `config:"format,omitempty"`
	Runtime        string    `config:"runtime,omitempty"`
	DeploymentMode string    `config:"deployment_mode,omitempty"`
	StorageURI     string    `config:"storage_uri,omitempty"`
	MinReplicas    int       `config:"replicas.min"`
	MaxReplicas    int       `config:"replicas.max"`
	Priority       *Priority `config:"priority,ref,omitempty"`
	// Env are plain environment variables of the model's container.
	Env map[string]string `config:"env"`
	// Autoscaling scales the model between its replicas on GPU load; nil
	// keeps KServe's default.
	Autoscaling *Autoscaling `config:"autoscaling,block"`
	// Clusters are the names of the fleet members the model is placed on,
	// in fleet order; empty for a single-cluster configuration.
	Clusters []string `config:"clusters,omitempty"`
	// ClusterSelector is the cluster_selector argument: the labels of the
	// members the model is placed on.
	ClusterSelector map[string]string `config:"cluster_selector,omitempty"`
	// place is the placement as written (placement.go).
	place placement `config:"-"`
}

// Autoscaling is a model's autoscaling block: a metric from Prometheus, the
// value to hold it at and how long to wait before scaling down.
type Autoscaling struct {
	Meta
	// GPUUtilization is the target average GPU utilization in percent; 0
	// when Query sets the metric.
	GPUUtilization int    `config:"gpu_utilization,omitempty"`
	Query          string `config:"query,omitempty"`
	// Target is the value Query is held at (GPUUtilization for the GPU
	// utilization query).
	Target     float64 `config:"target"`
	Prometheus string  `config:"prometheus,omitempty"`
	// Cooldown is the seconds the load must stay low before a scale-down.
	Cooldown int `config:"cooldown"`
}

// Deployment modes of a KServe InferenceService.
const (
	DeploymentStandard  = "Standard"
	DeploymentKnative   = "Knative"
	DeploymentModelMesh = "ModelMesh"
)

// PoolAlerts is the alerts block of a pool: gpuform's built-in GPU
// alerts over the pool's nodes, with their thresholds (percent, degrees C)
// and how long each condition must hold (a Prometheus duration, "15m").
type PoolAlerts struct {
	Meta
	UtilizationBelow float64           `config:"utilization_below"`
	UtilizationFor   string            `config:"utilization_for"`
	MemoryAbove      float64           `config:"memory_above"`
	MemoryFor        string            `config:"memory_for"`
	TemperatureAbove float64           `config:"temperature_above"`
	TemperatureFor   string            `config:"temperature_for"`
	Disabled         []string          `config:"disabled,omitempty"`
	Labels           map[string]string `config:"labels,omitempty"`
}

// TenantAlerts is the alerts block of a tenant: the GPU alerts over the
// tenant's pods, and its quota saturation and pending pods.
type TenantAlerts struct {
	Meta
	UtilizationBelow float64           `config:"utilization_below"`
	UtilizationFor   string            `config:"utilization_for"`
	MemoryAbove      float64           `config:"memory_above"`
	MemoryFor        string            `config:"memory_for"`
	TemperatureAbove float64           `config:"temperature_above"`
	TemperatureFor   string            `config:"temperature_for"`
	QuotaAbove       float64           `config:"quota_above"`
	QuotaFor         string            `config:"quota_for"`
	PendingFor       string            `config:"pending_for"`
	Disabled         []string          `config:"disabled,omitempty"`
	Labels           map[string]string `config:"labels,omitempty"`
}

// Alert is an alert block instance: one alerting rule of the operator's,
// an expression in PromQL that fires once it has held for For.
type Alert struct {
	Meta
	Expr        string            `config:"expr"`
	For         string            `config:"for"`
	Severity    string            `config:"severity"`
	Labels      map[string]string `config:"labels,omitempty"`
	Annotations map[string]string `config:"annotations,omitempty"`
}
