gpuform {
  stack     = "ml-platform"
  scheduler = "volcano"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.balanced
}

tenant "research" {
  quota "a100" {
    slices = { "1g.10gb" = 2 }
  }
  # A Volcano Queue's weight is between 1 and 65535.
  weight = 100000
}
