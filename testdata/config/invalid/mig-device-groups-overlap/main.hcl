gpuform {
  stack = "ml-platform"
}

mig_layout "mixed" {
  gpu = "H100-80GB"
  device {
    indexes = [0, 1, 2, 3]
    slices  = { "1g.10gb" = 7 }
  }
  device {
    indexes = [3, 4, 5, 6, 7]
    slices  = { "3g.40gb" = 2 }
  }
}

pool "h100" {
  gpu        = "H100-80GB"
  mig_layout = mig_layout.mixed
}
