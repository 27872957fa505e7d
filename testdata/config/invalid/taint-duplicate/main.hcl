gpuform {
  stack = "isolation"
}

pool "secure" {
  gpu = "NVIDIA-H100-80GB-HBM3"
  taint {
    key   = "gpuform.dev/dedicated"
    value = "payments"
  }
  taint {
    key    = "gpuform.dev/dedicated"
    value  = "risk"
    effect = "NoSchedule"
  }
  taint {
    key    = "gpuform.dev/dedicated"
    effect = "Sometimes"
  }
}
