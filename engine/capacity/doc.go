// Package capacity is what gpuform knows of the cluster's GPUs: each node's
// inventory (InventoryOf: the gpuform agent's annotation when it is sound,
// else GPU Feature Discovery labels, else the nvidia.com/gpu capacity) and
// each pool's capacity against the tenants' quotas and the models'
// requests (Check, CheckFrom).
//
// Problems are hcl.Diagnostics on the configuration: errors for a
// configuration that does not fit the GPUs (a pool without nodes, nodes
// with other GPUs or an old driver, quotas beyond capacity x overcommit),
// warnings for inventory annotations that were not trusted, each carrying
// the source range of the block it is about.
//
// The package reads Kubernetes objects as unstructured values and the
// configuration; it does not import the engine, whose plan carries its
// Report.
package capacity
