gpuform {
  stack = "ML Platform"
}

priority "batch" {
  value = 1000
}
