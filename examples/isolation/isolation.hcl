# Isolation between tenants on shared GPU nodes: a tainted pool that only
# tenants with quota on it reach, a tenant whose pods run in a sandboxed
# runtime, and a model that scales on its GPU utilization.
gpuform {
  stack     = "isolation"
  scheduler = "kueue"
}

cluster {
  simulated = "cluster.sim.hcl"
}

# The H100 nodes carry a taint (set when they join the cluster): pods
# without its toleration are not scheduled there. Models on the pool get
# the toleration; Kueue admits other workloads there only with quota.
pool "secure" {
  gpu = "NVIDIA-H100-80GB-HBM3"
  taint {
    key    = "gpuform.dev/dedicated"
    value  = "secure"
    effect = "NoSchedule"
  }
}

pool "a100" {
  gpu = "A100-80GB"
  time_slicing {
    replicas = 4
  }
}

# Every pod of this tenant runs in gVisor: the admission policy refuses a
# pod in its namespace without runtimeClassName gvisor.
tenant "payments" {
  runtime_class = "gvisor"
  quota "secure" {
    gpus = 4
  }
}

tenant "research" {
  quota "a100" {
    gpus = 8
  }
}

# Between 1 and 4 replicas, one added while the average GPU utilization of
# the model's pods is above 70%, one removed after 10 minutes below.
model "fraud" {
  tenant      = tenant.payments
  pool        = pool.secure
  gpus        = 1
  format      = "huggingface"
  storage_uri = "s3://models/fraud"
  replicas    = { min = 1, max = 4 }
  autoscaling {
    gpu_utilization = 70
    cooldown        = 600
  }
}
