gpuform {
  stack = "ml-platform"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.halves
}

# gpuform sets the GPU Operator's MIG strategy to mixed for the MIG pool,
# and the device plugin refuses MPS under that strategy.
pool "h100" {
  gpu = "H100-80GB"
  mps {
    replicas = 4
  }
}
