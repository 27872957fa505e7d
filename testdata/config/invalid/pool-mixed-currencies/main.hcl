gpuform {
  stack = "ml-platform"
}

pool "l4" {
  gpu                = "L4"
  price_per_gpu_hour = 0.8
  currency           = "EUR"
}

pool "h100" {
  gpu                = "H100-80GB"
  price_per_gpu_hour = 4.1
}
