gpuform {
  stack       = "ml-platform"
  pin_drivers = true
}

# A driver pin installs one version: a range cannot be installed.
pool "h200" {
  gpu            = "H200-141GB"
  driver_version = ">= 550"
}
