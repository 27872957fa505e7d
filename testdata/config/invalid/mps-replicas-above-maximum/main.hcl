gpuform {
  stack = "ml-platform"
}

# An MPS server takes at most 48 clients per GPU; the device plugin's MPS
# daemon refuses more.
pool "h100" {
  gpu = "H100-80GB"
  mps {
    replicas = 64
  }
}
