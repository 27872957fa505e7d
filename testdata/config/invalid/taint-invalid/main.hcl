gpuform {
  stack = "isolation"
}

pool "secure" {
  gpu = "NVIDIA-H100-80GB-HBM3"
  taint {
    key   = "dedicated to/payments"
    value = "payments team"
  }
}
