package engine

import (
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
)

// Action is what a change does to one object.
type Action string

// Actions of a change.
const (
	ActionCreate Action = "create"
	ActionUpdate Action = "update"
	ActionDelete Action = "delete"
	// ActionAdopt takes over an object gpuform does not own yet (--adopt).
	ActionAdopt Action = "adopt"
	// ActionConflict is an object in the way that gpuform will not touch.
	ActionConflict Action = "conflict"
)

// Symbol is the plan symbol of an action, as Terraform prints it.
func (a Action) Symbol() string {
	switch a {
	case ActionCreate:
		return "+"
	case ActionUpdate, ActionAdopt:
		return "~"
	case ActionDelete:
		return "-"
	case ActionConflict:
		return "!"
	}
	return " "
}

// FieldOp is how one field changes.
type FieldOp string

// Field operations.
const (
	FieldAdd    FieldOp = "+"
	FieldChange FieldOp = "~"
	FieldRemove FieldOp = "-"
)

// FieldDiff is one changed field of an update.
type FieldDiff struct {
	// Path is the field path, e.g. spec.hard["requests.nvidia.com/gpu"].
	Path   string  `json:"path"`
	Op     FieldOp `json:"op"`
	Before any     `json:"before,omitempty"`
	After  any     `json:"after,omitempty"`
}

// Change is one planned change to one object.
type Change struct {
	// Address is the config address the object belongs to.
	Address string
	Key     Key
	// APIVersion of the object.
	APIVersion string
	Action     Action
	// Before is the live object (nil for creates); After the desired one (nil for deletes).
	Before *unstructured.Unstructured
	After  *unstructured.Unstructured
	// Fields lists the changed fields of an update or adoption.
	Fields []FieldDiff
	// DependsOn lists keys that must be applied first.
	DependsOn []Key
	// Sensitive hides field values in every output.
	Sensitive bool
	// Reason explains a conflict.
	Reason string
	// Wait, on a Node change that re-partitions MIG, names the label or
	// annotation whose value turns "success" when the node is done.
	Wait string `json:"wait,omitempty"`
	// Throttle groups changes that may run only Throttles[group] at a time
	// (a pool's max_unavailable).
	Throttle string `json:"throttle,omitempty"`
}

// Summary counts a plan's changes.
type Summary struct {
	Add       int `json:"add"`
	Change    int `json:"change"`
	Destroy   int `json:"destroy"`
	Conflicts int `json:"conflicts"`
	Unchanged int `json:"unchanged"`
}

// Plan is an ordered change set: creates and updates in dependency order,
// then deletes in reverse dependency order.
type Plan struct {
	Stack   string
	Source  string
	Changes []*Change
	// ReadVersions is the resourceVersion of every object the plan read, by key.
	ReadVersions map[Key]string
	Summary      Summary
	// Warnings are non-fatal findings to show with the plan: warning
	// diagnostics whose Summary is the message (see Warning), with the
	// source range of the block they are about when it is known.
	Warnings hcl.Diagnostics
	// Capacity is the GPU capacity per pool, when it was checked.
	Capacity *capacity.Report
	// Throttles bound the changes of a group in flight at once.
	Throttles map[string]int
	// Disruption lists, per node re-partitioned, the pods using its GPUs.
	Disruption map[string][]string
	// Repartitions are the nodes the plan re-partitions, with their GPUs'
	// MIG instances now and after (what the outputs draw).
	Repartitions []capacity.Repartition
	// ConfigSource says where the configuration came from; nil when unknown.
	ConfigSource *ConfigSource
	// Policies are the stack's ValidatingAdmissionPolicies (StackPolicies):
	// apply proves each enforced in a tenant's namespace before it grants
	// access there.
	Policies []string
	// PoliciesBoundAlike is set when the Policies' bindings all match the
	// same requests: a namespace's proof then needs one policy's probe
	// once each was proven somewhere (StackPolicies).
	PoliciesBoundAlike bool
	// Migrate, for a stack without a record yet (Live.Inventory nil), are
	// the keys of the desired objects that Owned's rule gives the stack:
	// the first apply records them (NextInventory) besides what it
	// writes. Nil once the stack has a record.
	Migrate []Key
	// Destroy marks a destroy plan (gpuform destroy, plan --destroy):
	// every object the stack's record holds is deleted, and the safety
	// limits of a destroy apply (see Unsafe).
	Destroy bool
	// Targets are the addresses the plan was narrowed to (--target, see
	// Target); nil for a whole plan.
	Targets []string
}

// ConfigSource is where a plan's configuration was read from: the commit
// and whether the work tree had uncommitted changes.
type ConfigSource struct {
	// Repo is the repository given with --repo ("" for the working
	// directory's); Ref the ref asked for ("" for the working directory).
	Repo string `json:"repo,omitempty"`
	Ref  string `json:"ref,omitempty"`
	// Commit is the full commit hash ("" outside git).
	Commit string `json:"commit"`
	// Dirty is true when the configuration was read from a work tree with
	// uncommitted changes.
	Dirty bool `json:"dirty"`
}

// Stamp is what apply records in gpuform.dev/commit: the commit, with
// "-dirty" when the work tree had uncommitted changes ("" outside git).
func (s *ConfigSource) Stamp() string {
	if s.Commit == "" || !s.Dirty {
		return s.Commit
	}
	return s.Commit + "-dirty"
}

// String describes the source for plan headers: "working directory at
// 0123456789ab (with uncommitted changes)", "main at 0123456789ab".
func (s *ConfigSource) String() string {
	short := s.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	switch {
	case s.Commit == "":
		return "working directory (not in git)"
	case s.Ref == "" && s.Dirty:
		return "working directory at " + short + " (with uncommitted changes)"
	case s.Ref == "":
		return "working directory at " + short
	}
	return s.Ref + " at " + short
}

// HasChanges reports whether applying the plan would change anything.
func (p *Plan) HasChanges() bool {
	return p.Summary.Add+p.Summary.Change+p.Summary.Destroy > 0
}
