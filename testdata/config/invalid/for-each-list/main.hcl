gpuform {
  stack     = "ml-platform"
  scheduler = "kueue"
}

priority "realtime" {
  value      = 1000000
  preemption = "PreemptLowerPriority"
}

priority "batch" {
  value      = 1000
  preemption = "Never"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.balanced
}

pool "l40s" {
  gpu = "L40S"
  time_slicing {
    replicas = 4
  }
}

tenant "team" {
  for_each = ["research", "serving", "ocr"]
  quota "l40s" {
    gpus = 1
  }
}
