gpuform {
  stack = "ml-platform"
}

pool "a100" {
  gpu = "A100-80GB"
}

tenant "research" {
  quota "a100" {
    gpus = 2
  }
}

# A missing closing parenthesis: the error points inside the string.
alert "TrainingStalled" {
  expr     = "sum by (namespace) (rate(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{namespace=\"research\"}[10m]) < 0.05"
  for      = "30m"
  severity = "warning"
}

# A heredoc: the error points at its line.
alert "NodeGPUsMissing" {
  expr = <<EOT
count by (Hostname) (DCGM_FI_DEV_GPU_TEMP)
  < on (Hostname) group_left kube_node_status_capacity{resource="nvidia_com_gpu"} by
EOT
}
