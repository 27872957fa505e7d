gpuform {
  stack = "ml-platform"
}

pool "a100" {
  gpu            = "A100-80GB"
  node_selectors = { "gpuform.dev/node-group" = "a100" }
}
