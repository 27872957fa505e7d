# The bank scenario: three tenants (risk, chatbot, OCR) share an A100-80GB
# MIG pool and an H100 pool, with realtime and batch priorities.
gpuform {
  stack     = "bank-prod"
  scheduler = "kueue"
  # PrometheusRules go to the monitoring stack's namespace, with the label
  # its Prometheus selects rules by.
  alerts_namespace = "monitoring"
  alerts_labels    = { release = "kube-prometheus-stack" }
}

variable "risk_gpus" {
  type        = number
  default     = 2
  description = "3g.40gb slices reserved for the risk team."
  validation {
    condition     = var.risk_gpus > 0
    error_message = "risk_gpus must be positive."
  }
}

variable "model_bucket" {
  type      = string
  default   = "s3://bank-models"
  sensitive = false
}

locals {
  admins = ["group:platform-admins"]
}

priority "realtime" {
  value       = 1000000
  preemption  = "PreemptLowerPriority"
  description = "latency-critical inference"
}

priority "batch" {
  value       = 1000
  preemption  = "Never"
  description = "offline scoring and document processing"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "a100" {
  gpu             = "A100-80GB"
  node_selector   = { "gpuform.dev/node-group" = "a100" }
  mig_layout      = mig_layout.balanced
  overcommit      = 1.0
  max_unavailable = 1
  # gpuform usage: a 3g.40gb slice-hour costs 3/7 of this.
  price_per_gpu_hour = 2.80
  currency           = "EUR"
  # gpuform's GPU alerts over the pool's nodes, at their defaults but for
  # temperature (A100 SXM runs warm); utilization of MIG instances needs the
  # DCGM exporter's profiling metrics (docs/observability.md).
  alerts {
    temperature_above = 88
    labels            = { team = "platform" }
  }
}

pool "h100" {
  gpu           = "NVIDIA-H100-80GB-HBM3"
  node_selector = { "gpuform.dev/node-group" = "h100" }
  # gpuform usage: each of the 2 time-slicing replicas costs half of this.
  price_per_gpu_hour = 4.10
  currency           = "EUR"
  time_slicing {
    replicas = 2
  }
  alerts {
    labels = { team = "platform" }
  }
}

tenant "risk" {
  labels = { team = "risk" }
  quota "a100" {
    slices          = { "3g.40gb" = var.risk_gpus, "1g.10gb" = 2 }
    borrowing_limit = { "3g.40gb" = 1 }
    lending_limit   = { "3g.40gb" = 0 }
  }
  cohort           = "bank"
  cpu              = "64"
  memory           = "256Gi"
  pods             = 50
  priorities       = [priority.realtime, priority.batch]
  default_priority = priority.batch
  admins           = concat(local.admins, ["group:risk-admins"])
  editors          = ["group:risk-ds"]
  viewers          = ["user:auditor@bank.example"]
  alerts {
    quota_above = 95
    labels      = { team = "risk" }
  }
}

tenant "chatbot" {
  labels = { team = "chatbot" }
  quota "a100" {
    slices = { "2g.20gb" = 2, "1g.10gb" = 2 }
  }
  quota "h100" {
    gpus = 4
  }
  cohort           = "bank"
  cpu              = "32"
  memory           = "128Gi"
  priorities       = [priority.realtime, priority.batch]
  default_priority = priority.realtime
  admins           = concat(local.admins, ["group:chatbot-admins"])
  editors          = ["group:chatbot-dev"]
  alerts {
    utilization_below = 20
    utilization_for   = "30m"
    labels            = { team = "chatbot" }
  }
}

tenant "ocr" {
  namespace = "ocr-docs"
  labels    = { team = "ocr" }
  quota "h100" {
    gpus = 2
  }
  cohort           = "bank"
  priorities       = [priority.batch]
  default_priority = priority.batch
  admins           = local.admins
  protect          = false
}

# An alert of the platform team's own: the support assistant's GPUs have
# drawn more than 600 W on average for 10 minutes.
alert "AssistantPowerHigh" {
  expr     = "avg by (Hostname, gpu) (avg_over_time(DCGM_FI_DEV_POWER_USAGE{namespace=\"chatbot\", pod=~\"support-assistant-.*\"}[10m])) > 600"
  for      = "10m"
  severity = "warning"
  labels   = { team = "chatbot" }
  annotations = {
    summary     = "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} draws {{ $value | humanize }} W"
    description = "The support assistant's GPU has drawn over 600 W for 10 minutes."
  }
}

model "fraud-detector" {
  tenant      = tenant.risk
  pool        = pool.a100
  slice       = "3g.40gb"
  format      = "pytorch"
  runtime     = "kserve-torchserve"
  storage_uri = "${var.model_bucket}/fraud/v3"
  replicas    = { min = 2, max = 2 }
  priority    = priority.realtime
}

model "support-assistant" {
  tenant          = tenant.chatbot
  pool            = pool.h100
  gpus            = 1
  format          = "huggingface"
  deployment_mode = "Standard"
  storage_uri     = "${var.model_bucket}/assistant/v7"
  replicas        = { min = 1, max = 4 }
  priority        = priority.realtime
}

model "invoice-reader" {
  tenant      = tenant.ocr
  pool        = pool.h100
  gpus        = 1
  format      = "onnx"
  storage_uri = "${var.model_bucket}/ocr/v2"
  replicas    = { min = 1, max = 2 }
  priority    = priority.batch
}

