gpuform {
  stack = "ml-platform"
}

mig_layout "packed" {
  gpu    = "H100-80GB"
  slices = { "4g.40gb" = 1, "3g.40gb" = 1, "1g.10gb" = 1 }
}

pool "gpus" {
  gpu        = "H100-80GB"
  mig_layout = mig_layout.packed
}
