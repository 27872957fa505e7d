# The bank's simulated cluster: two A100-80GB nodes for the MIG pool and two
# H100 nodes for the time-sliced pool, their GPUs go-nvml simulated ones.
# gpuform keeps what it applies in cluster.sim.state.json beside this file
# (delete it to start empty).
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

node "gpu-h100-0" {
  gpu    = "H100-80GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "h100" }
}

node "gpu-h100-1" {
  gpu    = "H100-80GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "h100" }
}
