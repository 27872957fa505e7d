gpuform {
  stack = "isolation"
}

pool "secure" {
  gpu = "NVIDIA-H100-80GB-HBM3"
}

tenant "payments" {
  quota "secure" {
    gpus = 4
  }
}

model "fraud" {
  tenant      = tenant.payments
  pool        = pool.secure
  format      = "huggingface"
  storage_uri = "s3://models/fraud"
  replicas    = { min = 1, max = 4 }
  autoscaling {
    gpu_utilization = 70
    cooldown        = 7200
  }
  autoscaling {
    gpu_utilization = 50
  }
}
