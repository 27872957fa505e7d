gpuform {
  stack     = "ml-platform"
  scheduler = "slurm"
}

priority "batch" {
  value = 1000
}
