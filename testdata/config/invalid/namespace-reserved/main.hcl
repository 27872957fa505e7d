gpuform {
  stack = "ml-platform"
}

pool "l40s" {
  gpu = "L40S"
  alerts {}
}

tenant "default" {
}

tenant "system" {
  namespace = "kube-system"
}

tenant "operator" {
  namespace = "gpu-operator"
}

tenant "observability" {
  namespace = "monitoring"
}
