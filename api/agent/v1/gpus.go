package v1

// NodeGPUs is one node's simulated GPUs as the agent's MIG logic drives
// them: a layout applied, the inventory read back. providers/nvml makes
// them from go-nvml's simulated servers (cgo) and providers/sim from the
// GPU catalog (no cgo); the simulated cluster takes either, so it is
// declared here, where neither provider imports the other.
type NodeGPUs interface {
	// Apply applies layout to the GPUs as the agent does; rebootRequired
	// says a GPU needs a reset before the layout holds.
	Apply(layout Layout) (rebootRequired bool, err error)
	// Read reads the GPUs' inventory as the agent publishes it.
	Read() (*Inventory, error)
}
