gpuform {
  stack = "ml-platform"
}

tenant "research" {
  labels = { team = "résearch" }
}
