gpuform {
  scheduler = "kueue"
}

tenant "research" {
}
