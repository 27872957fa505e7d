gpuform {
  stack = "ml-platform"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.24gb" = 1, "3g.40gb" = 1 }
}

pool "gpus" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.balanced
}
