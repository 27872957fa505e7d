gpuform {
  stack = "ml-platform"
}

pool "l4" {
  gpu                = "L4"
  price_per_gpu_hour = -0.8
}
