package v1

// The node annotations of the agent protocol.
const (
	// AnnotMIGLayout is written by gpuform apply: the MIG layout the node
	// must have, a MIGLayout as compact JSON.
	AnnotMIGLayout = "gpuform.dev/mig-layout"
	// AnnotMIGState is written by the agent: StatePending, StateSuccess,
	// StateRebootRequired or "failed: <reason>".
	AnnotMIGState = "gpuform.dev/mig-state"
	// AnnotInventory is written by the agent: the node's Inventory, as
	// compact JSON.
	AnnotInventory = "gpuform.dev/inventory"
	// FieldManager is the server-side apply field manager of the agent.
	FieldManager = "gpuform-agent"
)

// The values of AnnotMIGState.
const (
	// StatePending: the agent is applying the layout.
	StatePending = "pending"
	// StateSuccess: the GPUs have the layout.
	StateSuccess = "success"
	// StateRebootRequired: a MIG mode change waits for a GPU reset.
	StateRebootRequired = "reboot-required"
	// StateFailed starts the state of a layout that could not be applied:
	// "failed: <reason>".
	StateFailed = "failed"
)
