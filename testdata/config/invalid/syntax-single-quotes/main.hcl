gpuform {
  stack     = 'ml-platform'
  scheduler = "kueue"
}
