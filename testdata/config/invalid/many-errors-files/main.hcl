gpuform {
  stack = "ml-platform"
}

priority "batch" {
  value = "1000"
}

priority "realtime" {
  value      = 1000000
  preemption = "Always"
}

pool "l40s" {
  gpu = "L40S"
  time_slicing {
    replicas = "four"
  }
}
