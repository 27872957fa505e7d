// Package v1 is version 1 of the gpuform agent's wire formats, in the
// spirit of NVIDIA mig-parted's api/spec/v1: the node annotations through
// which gpuform apply and the gpuform agent talk, and the Go types they
// encode.
//
//   - AnnotMIGLayout (gpuform.dev/mig-layout), written by gpuform apply on
//     the nodes of a pool with mig_backend = "agent" and read by the agent:
//     a MIGLayout, the pool's layout as mig-parted config entries.
//   - AnnotMIGState (gpuform.dev/mig-state), written by the agent: how
//     applying the layout went (StatePending, StateSuccess,
//     StateRebootRequired or "failed: <reason>").
//   - AnnotInventory (gpuform.dev/inventory), written by the agent and read
//     by gpuform plan, inventory and drift: an Inventory, what NVML reports
//     of the node's GPUs. ParseInventory is the reader's check of it.
//
// NodeClient is what the agent needs of the Kubernetes API (its own Node),
// declared here so that the agent (providers/nvml) and what implements it
// for a cluster (providers/kubernetes) need not import each other.
//
// The writer and every reader use these types, so the formats are declared
// once. Importers name the package agentv1. It depends on the standard
// library only.
package v1
