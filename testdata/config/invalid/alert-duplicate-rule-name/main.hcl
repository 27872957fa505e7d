gpuform {
  stack = "ml-platform"
}

# Two alerts whose names differ only in case and '_' would share one
# PrometheusRule, gpuform-ml-platform-alert-gpu-hot.
alert "GPU_Hot" {
  expr = "DCGM_FI_DEV_GPU_TEMP > 90"
  for  = "5m"
}

alert "gpu_hot" {
  expr     = "DCGM_FI_DEV_GPU_TEMP > 95"
  severity = "critical"
}
