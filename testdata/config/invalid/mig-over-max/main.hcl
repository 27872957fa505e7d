gpuform {
  stack = "ml-platform"
}

mig_layout "quarters" {
  gpu    = "A100-80GB"
  slices = { "2g.20gb" = 4 }
}

pool "gpus" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.quarters
}
