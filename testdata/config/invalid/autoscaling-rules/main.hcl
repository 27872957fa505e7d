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

model "both" {
  tenant      = tenant.payments
  pool        = pool.secure
  format      = "huggingface"
  storage_uri = "s3://models/both"
  replicas    = { min = 1, max = 4 }
  autoscaling {
    gpu_utilization = 70
    query           = "sum(rate(requests_total[1m]))"
    target          = 100
  }
}

model "knative" {
  tenant          = tenant.payments
  pool            = pool.secure
  format          = "huggingface"
  storage_uri     = "s3://models/knative"
  deployment_mode = "Knative"
  replicas        = { min = 1, max = 4 }
  autoscaling {
    gpu_utilization = 70
  }
}

model "fixed" {
  tenant      = tenant.payments
  pool        = pool.secure
  format      = "huggingface"
  storage_uri = "s3://models/fixed"
  replicas    = { min = 2, max = 2 }
  autoscaling {
    gpu_utilization = 170
    prometheus      = "prometheus.monitoring:9090"
  }
}

model "query" {
  tenant      = tenant.payments
  pool        = pool.secure
  format      = "huggingface"
  storage_uri = "s3://models/query"
  replicas    = { min = 1, max = 4 }
  autoscaling {
    query = "sum(vllm:num_requests_waiting{namespace=\"payments\"})"
  }
}
