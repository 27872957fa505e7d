gpuform {
  stack = "ml-platform"
}

mig_layout "sevens" {
  gpu    = "A100-96GB"
  slices = { "1g.10gb" = 7 }
}

pool "gpus" {
  gpu        = "A100-96GB"
  mig_layout = mig_layout.sevens
}
