gpuform {
  stack = "ml-platform"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "h100" {
  gpu           = "NVIDIA-H100-80GB-HBM3"
  node_selector = { "gpuform.dev/node-group" = "h100" }
  mig_layout    = mig_layout.halves
}
