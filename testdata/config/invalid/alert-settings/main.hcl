gpuform {
  stack            = "ml-platform"
  alerts_namespace = "Monitoring"
}

pool "a100" {
  gpu = "A100-80GB"
  alerts {
    utilization_below = 130
    memory_for        = "5 minutes"
    disabled          = ["quota_saturation"]
  }
}

tenant "research" {
  quota "a100" {
    gpus = 2
  }
  alerts {
    temperature_above = 0
    labels            = { "team-name" = "research" }
  }
}

alert "gpu-burn" {
  expr        = "DCGM_FI_DEV_POWER_USAGE > 650"
  for         = "10"
  labels      = { team = "{{ $labels.namespace" }
  annotations = { summary = "{{ $labels.Hostname }" }
}
