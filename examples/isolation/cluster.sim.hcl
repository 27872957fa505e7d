# The embedded simulated cluster of the isolation example: two H100 nodes
# for the secure pool and two A100 nodes for the a100 one, their GPUs
# go-nvml simulated. gpuform keeps the objects it applies in
# cluster.sim.state.json beside this file (delete it to start empty).

# The RuntimeClasses installed (gVisor's): plan warns of a tenant's
# runtime_class that names another.
runtime_classes = ["gvisor"]
# The secure pool's nodes join the cluster with their taint (kubelet's
# --register-with-taints): gpuform declares it, never sets it.
node "gpu-h100-0" {
  gpu    = "NVIDIA-H100-80GB-HBM3"
  count  = 2
  labels = { "gpuform.dev/node-group" = "secure" }
  taints = ["gpuform.dev/dedicated=secure:NoSchedule"]
}

node "gpu-h100-1" {
  gpu    = "NVIDIA-H100-80GB-HBM3"
  count  = 2
  labels = { "gpuform.dev/node-group" = "secure" }
  taints = ["gpuform.dev/dedicated=secure:NoSchedule"]
}

node "gpu-a100-0" {
  gpu    = "A100-80GB"
  count  = 2
  labels = { "gpuform.dev/node-group" = "a100" }
}
