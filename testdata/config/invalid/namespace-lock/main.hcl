gpuform {
  stack = "ml-platform"
}

pool "l40s" {
  gpu = "L40S"
}

tenant "platform" {
  namespace = "gpuform-system"
  quota "l40s" {
    gpus = 1
  }
}
