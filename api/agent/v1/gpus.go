package v1

import (
	"crypto/sha256"
	"fmt"
)

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

// SimulatedUUID is the UUID of the simulated GPU index of node: "GPU-" and
// a version-8 UUID (RFC 9562) of the SHA-256 of the node's name and the
// index, so that a node reads the same inventory every time it is
// simulated.
func SimulatedUUID(node string, index int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("gpuform simulated GPU\x00%s\x00%d", node, index)))
	h[6] = h[6]&0x0f | 0x80 // version 8: custom
	h[8] = h[8]&0x3f | 0x80 // variant RFC 9562
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
