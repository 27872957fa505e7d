gpuform {
  stack = "ml-platform"
}

priority "batch" {
  value: 1000
  preemption = "Never"
}
