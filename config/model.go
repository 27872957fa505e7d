package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Config is one evaluated gpuform configuration: every block of one directory,
// with variables resolved, for_each/count expanded and references linked.
type Config struct {
	// Dir is the directory the configuration was read from ("." for an fs.FS root).
	Dir string
	// Files holds the parsed files by name, for diagnostics with source snippets.
	Files map[string]*hcl.File
	// Hash is a SHA-256 over every input: files, --var values and
	// GPUFORM_VAR_ variables; saved plans record it.
	Hash string
	// Settings is the gpuform block.
	Settings *Settings
	// Cluster is the cluster block; a zero Cluster when the configuration has none.
	Cluster *Cluster
	// Variables are the declared input variables with their final values.
	Variables []*Variable
	// Priorities, MIGLayouts, Pools, Tenants and Models are the resource block
	// instances in source order (for_each instances in key order, count in index order).
	Priorities []*Priority
	MIGLayouts []*MIGLayout
	Pools      []*Pool
	Tenants    []*Tenant
	Models     []*Model
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
	// Ranges maps attribute (and nested block) names to the range of their value.
	Ranges map[string]hcl.Range
	// KeyRanges maps map-valued attributes to the range of each literal key's item.
	KeyRanges map[string]map[string]hcl.Range
	// Sensitive names the attributes whose value derives from a sensitive variable.
	Sensitive map[string]bool
}

// Range returns the source range of attribute attr, or the block header when
// the attribute was not written (a default).
func (m *Meta) Range(attr string) hcl.Range {
	if r, ok := m.Ranges[attr]; ok {
		return r
	}
	return m.DeclRange
}

// KeyRange returns the source range of key in map attribute attr, falling back
// to the attribute's range when the key was not a literal.
func (m *Meta) KeyRange(attr, key string) hcl.Range {
	if r, ok := m.KeyRanges[attr][key]; ok {
		return r
	}
	return m.Range(attr)
}

// IsSensitive reports whether attribute attr carries a sensitive value.
func (m *Meta) IsSensitive(attr string) bool { return m.Sensitive[attr] }

// HasAttr reports whether attribute attr was written in the source.
func (m *Meta) HasAttr(attr string) bool {
	_, ok := m.Ranges[attr]
	return ok
}

// Settings is the gpuform block: the stack and how GPUs are driven.
type Settings struct {
	Meta
	Stack                string
	Scheduler            string
	MIGBackend           string
	GPUOperatorNamespace string
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
	Kubeconfig string
	Context    string
	Simulated  string
}

// Variable is a declared input variable and the value it ended with.
type Variable struct {
	Meta
	Description string
	Sensitive   bool
	// Source says where the value came from: "default", "env", a file name, or "--var".
	Source string
	// Value is the final value (cty.DynamicVal when unusable), marked
	// sensitive when Sensitive: never print it without checking.
	Value cty.Value
}

// Priority is a priority block instance.
type Priority struct {
	Meta
	Value       int64
	Preemption  string
	Description string
}

// Preemption policies.
const (
	PreemptLowerPriority = "PreemptLowerPriority"
	PreemptNever         = "Never"
)

// MIGLayout is a mig_layout block instance: the MIG profiles on each GPU of a node.
type MIGLayout struct {
	Meta
	GPU string
	// Slices is the profile -> count on every GPU (when Devices is empty).
	Slices map[string]int
	// Devices are per device-group layouts, used instead of Slices.
	Devices []*DeviceGroup
}

// DeviceGroup is a device block of a mig_layout: a layout for some GPU indexes.
type DeviceGroup struct {
	Meta
	Indexes []int
	Slices  map[string]int
	Enabled bool
}

// Pool is a pool block instance: a set of GPU nodes and how they are shared.
type Pool struct {
	Meta
	GPU            string
	NodeSelector   map[string]string
	MIGLayout      *MIGLayout
	TimeSlicing    *TimeSlicing
	Overcommit     float64
	MaxUnavailable int
	// DriverVersion is a constraint on the nodes' NVIDIA driver, such as
	// ">= 535" or "550.54.15"; empty means any.
	DriverVersion string
}

// TimeSlicing is a pool's time_slicing block.
type TimeSlicing struct {
	Meta
	Replicas int
}

// Tenant is a tenant block instance: a namespace with quotas, priorities and access.
type Tenant struct {
	Meta
	Namespace       string
	Labels          map[string]string
	Quotas          []*Quota
	Cohort          string
	Weight          int
	Reclaimable     bool
	CPU             string
	Memory          string
	Pods            int
	Priorities      []*Priority
	DefaultPriority *Priority
	Admins          []string
	Editors         []string
	Viewers         []string
	Protect         bool
}

// Quota is a tenant's quota block for one pool.
type Quota struct {
	Meta
	// PoolName is the block label; Pool is the pool it names (nil when unknown).
	PoolName       string
	Pool           *Pool
	Slices         map[string]int
	GPUs           int
	BorrowingLimit map[string]int
	LendingLimit   map[string]int
}

// Model is a model block instance: a KServe InferenceService.
type Model struct {
	Meta
	Tenant         *Tenant
	Pool           *Pool
	Slice          string
	GPUs           int
	Format         string
	Runtime        string
	DeploymentMode string
	StorageURI     string
	MinReplicas    int
	MaxReplicas    int
	Priority       *Priority
}

// Deployment modes of a KServe InferenceService.
const (
	DeploymentStandard  = "Standard"
	DeploymentKnative   = "Knative"
	DeploymentModelMesh = "ModelMesh"
)
