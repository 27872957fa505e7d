gpuform {
  stack = "ml-platform"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40GB" = 2 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.halves
}

tenant "research" {
  quota "a100" {
    slices = { "3g.40gb" = 1 }
  }
}
