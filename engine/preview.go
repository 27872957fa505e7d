package engine

import "github.com/gpuform/gpuform/engine/capacity"

// Preview is what merging a pull request would do (plan --base): (a) the
// semantic diff of the configuration from base to head, (b) the plan of
// head against the live cluster now, (c) the GPU capacity of every pool
// under base and under head, on the same live nodes.
type Preview struct {
	// Plan is head's plan against the cluster; Plan.ConfigSource is head's
	// commit and Plan.Capacity head's capacity.
	Plan *Plan
	// Base is the base configuration's commit and the ref asked for.
	Base *ConfigSource
	// BaseError says why the base configuration could not be read; then
	// ConfigChanges list every block of head as added and CapacityBefore is nil.
	BaseError string
	// ConfigChanges is ConfigDiff(base, head).
	ConfigChanges []BlockChange
	// CapacityBefore is the base configuration's capacity on the same nodes.
	CapacityBefore []capacity.Row
	// CapacityProblems are what the capacity check found wrong with head
	// (quotas over capacity, a pool that selects no node): plan refuses it.
	CapacityProblems []string
}
