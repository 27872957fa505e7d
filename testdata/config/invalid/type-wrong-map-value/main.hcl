gpuform {
  stack = "ml-platform"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = "two", "3g.40gb" = 1 }
}
