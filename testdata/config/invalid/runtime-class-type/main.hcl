gpuform {
  stack = "isolation"
}

tenant "payments" {
  runtime_class = { sandbox = "gvisor" }
}

tenant "research" {
  runtime_class = []
}
