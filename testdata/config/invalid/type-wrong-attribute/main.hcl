gpuform {
  stack = "ml-platform"
}

priority "batch" {
  value = 1000
}

tenant "research" {
  pods             = "fifty"
  priorities       = [priority.batch]
  default_priority = priority.batch
}
