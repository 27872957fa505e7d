gpuform {
  stack = "ml-platform"
}

mig_layout "small" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 0 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.small
}

tenant "research" {
  quota "a100" {
    slices = { "1g.10gb" = 1 }
  }
}
