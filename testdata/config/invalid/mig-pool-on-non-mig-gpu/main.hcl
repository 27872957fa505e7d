gpuform {
  stack = "ml-platform"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "inference" {
  gpu        = "L40S"
  mig_layout = mig_layout.halves
}
