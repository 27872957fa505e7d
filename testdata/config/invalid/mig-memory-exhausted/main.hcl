gpuform {
  stack = "ml-platform"
}

mig_layout "packed" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2, "1g.10gb" = 1 }
}

pool "gpus" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.packed
}
