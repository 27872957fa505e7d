# Isolation beside the shared pools of main.hcl: a tainted pool of whole
# H100s that only its tenant's models tolerate, a tenant whose pods must run
# in a sandboxed runtime, and a model that scales on its GPU utilization.
# (examples/isolation shows the same on a stack of its own.)

# The nodes join the cluster with this taint (kubelet's
# --register-with-taints; see cluster.sim.hcl): gpuform declares it, gives
# the pool's models and Kueue flavor the toleration, and never sets it.
pool "secure" {
  gpu = "H100-80GB"
  taint {
    key    = "gpuform.dev/dedicated"
    value  = "secure"
    effect = "NoSchedule"
  }
}

# Every pod in this tenant's namespace runs in gVisor: an admission policy
# refuses a pod there without runtimeClassName gvisor.
tenant "payments" {
  runtime_class = "gvisor"
  quota "secure" {
    gpus = 2
  }
  priorities       = [priority.standard]
  default_priority = priority.standard
}

# Between 1 and 2 replicas: one added while the average GPU utilization of
# the model's pods is above 70%, one removed after 10 minutes below.
model "fraud" {
  tenant      = tenant.payments
  pool        = pool.secure
  gpus        = 1
  format      = "huggingface"
  storage_uri = "s3://models/fraud"
  replicas    = { min = 1, max = 2 }
  autoscaling {
    gpu_utilization = 70
    cooldown        = 600
  }
}
