gpuform {
  stack = "ml-platform"
}

mig_layout "media" {
  gpu    = "A30-24GB"
  slices = { "1g.6gb+me" = 1, "2g.12gb+me" = 1, "1g.6gb" = 1 }
}

pool "gpus" {
  gpu        = "A30-24GB"
  mig_layout = mig_layout.media
}
