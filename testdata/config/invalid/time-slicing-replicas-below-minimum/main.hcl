gpuform {
  stack     = "ml-platform"
  scheduler = "none"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.balanced
}

# The NVIDIA device plugin refuses a time-slicing config with fewer than 2
# replicas, and the nodes would then offer no GPUs.
pool "l40s" {
  gpu = "L40S"
  time_slicing {
    replicas = 1
  }
}
