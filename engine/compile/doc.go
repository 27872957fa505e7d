// Package compile turns an evaluated configuration into the objects gpuform
// wants in the cluster: Validate checks what the language alone cannot (MIG
// layouts against the GPU catalog, references between blocks, generated
// Kubernetes names), and Compile turns a valid configuration into an
// engine.Desired: every object with its dependencies and the labels of each
// pool's nodes.
//
// What depends on the stack's choices lives behind two interfaces, one file
// per implementation: a Scheduler (none, Kueue, Volcano) adds queues and
// workload labels, and a MIGBackend (the GPU Operator's mig-manager or the
// gpuform agent) says how a pool's nodes get their MIG layout. The table in
// backends.go picks them from the gpuform block. Sharing whole GPUs
// (time-slicing) goes through the device plugin's ConfigMap whichever the
// MIG backend (deviceplugin.go).
package compile
