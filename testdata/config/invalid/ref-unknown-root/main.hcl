gpuform {
  stack = "ml-platform"
}

tenant "research" {
  namespace = team.research.namespace
}
