# The embedded simulated cluster of the quickstart: two GPU nodes whose GPUs
# are go-nvml simulated A100-80GBs. gpuform keeps the objects it applies in
# cluster.sim.state.json beside this file (delete it to start empty).
node "gpu-a100-0" {
  gpu    = "A100-80GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "a100" }
}

node "gpu-a100-1" {
  gpu    = "A100-80GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "a100" }
}
