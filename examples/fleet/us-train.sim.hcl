# The embedded simulated cluster of the fleet example's us-train member: two
# A100 nodes. gpuform keeps the objects it applies in us-train.sim.state.json
# beside this file (delete it to start empty).
node "gpu-a100-0" {
  gpu    = "A100-80GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "a100-us-train" }
}

node "gpu-a100-1" {
  gpu    = "A100-80GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "a100-us-train" }
}
