# The simulated cluster of the DRA example: an A100 node whose GPUs NVIDIA's
# DRA driver offers (dra = true: it publishes them in a ResourceSlice, and
# the node advertises no nvidia.com resource), and an L40S node of the
# device plugin. gpuform keeps the objects it applies in
# cluster.sim.state.json beside this file (delete it to start empty).
node "gpu-a100-0" {
  gpu    = "A100-80GB"
  count  = 2
  labels = { "gpuform.dev/node-group" = "a100" }
  dra    = true
}

node "gpu-l40s-0" {
  gpu    = "L40S"
  count  = 2
  labels = { "gpuform.dev/node-group" = "l40s" }
}
