# The embedded simulated cluster of the orgtree example: two GPU nodes
# whose GPUs are go-nvml simulated A100-80GBs and H100-80GBs. gpuform keeps
# the objects it applies in cluster.sim.state.json beside this file (delete
# it to start empty).
node "gpu-a100-0" {
  gpu    = "A100-80GB"
  count  = 8
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "a100" }
}

node "gpu-h100-0" {
  gpu    = "H100-80GB"
  count  = 8
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "h100" }
}
