# The embedded simulated cluster of the fleet example's burst member: one
# H100 node. gpuform keeps the objects it applies in burst.sim.state.json
# beside this file (delete it to start empty).
node "gpu-h100-0" {
  gpu    = "H100-80GB"
  count  = 8
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "h100" }
}
