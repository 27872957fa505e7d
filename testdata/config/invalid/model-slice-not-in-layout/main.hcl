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

tenant "serving" {
  quota "a100" {
    slices = { "1g.10gb" = 2, "2g.20gb" = 1 }
  }
  priorities       = [priority.realtime]
  default_priority = priority.realtime
}

model "fraud-detector" {
  tenant      = tenant.serving
  pool        = pool.a100
  slice       = "1g.20gb"
  format      = "pytorch"
  storage_uri = "s3://ml-models/fraud/v3"
  priority    = priority.realtime
}
