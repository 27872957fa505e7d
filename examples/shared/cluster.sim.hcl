# The embedded simulated cluster of the shared example: GPU nodes whose
# GPUs are go-nvml simulated H100s, A30s and H200s. gpuform keeps the
# objects it applies in cluster.sim.state.json beside this file (delete it
# to start empty).

# The simulated GPU Operator manages drivers with NVIDIADrivers, as the
# stack's pin_drivers needs.
nvidia_driver_crd = true

node "gpu-h100-0" {
  gpu    = "H100-80GB"
  count  = 2
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "h100-mps" }
}

node "gpu-a30-0" {
  gpu    = "A30-24GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "a30-shared" }
}

node "gpu-h200-0" {
  gpu    = "H200-141GB"
  count  = 4
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "h200" }
}

# The secure pool's node joins the cluster with its taint (kubelet's
# --register-with-taints): gpuform declares it, never sets it.
node "gpu-secure-0" {
  gpu    = "H100-80GB"
  count  = 2
  driver = "550.54.15"
  labels = { "gpuform.dev/node-group" = "secure" }
  taints = ["gpuform.dev/dedicated=secure:NoSchedule"]
}

# The RuntimeClasses installed (gVisor's): plan warns of a tenant's
# runtime_class that names another.
runtime_classes = ["gvisor"]
