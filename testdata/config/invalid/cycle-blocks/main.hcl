gpuform {
  stack = "ml-platform"
}

tenant "research" {
  namespace = "research"
  labels    = { peer = tenant.serving.namespace }
}

tenant "serving" {
  namespace = "serving"
  labels    = { peer = tenant.research.namespace }
}
