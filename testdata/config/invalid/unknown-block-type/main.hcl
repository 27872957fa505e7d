gpuform {
  stack = "ml-platform"
}

team "research" {
  namespace = "research"
}
