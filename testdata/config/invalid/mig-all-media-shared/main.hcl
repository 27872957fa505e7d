gpuform {
  stack = "ml-platform"
}

# A +me.all instance holds every media engine of the RTX PRO 6000: only
# -me instances share the GPU with it.
mig_layout "video" {
  gpu    = "RTX-PRO-6000-96GB"
  slices = { "1g.24gb+me.all" = 1, "1g.24gb" = 1, "1g.24gb-me" = 2 }
}

pool "gpus" {
  gpu        = "RTX-PRO-6000-96GB"
  mig_layout = mig_layout.video
}
