gpuform {
  stack = "ml-platform"
}

mig_layout "l40s_split" {
  gpu    = "L40S"
  slices = { "1g.12gb" = 4 }
}
