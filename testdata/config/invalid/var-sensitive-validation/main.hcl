gpuform {
  stack = "ml-platform"
}

variable "storage_token" {
  type      = string
  sensitive = true
  validation {
    condition     = length(var.storage_token) >= 16
    error_message = "storage_token must be at least 16 characters."
  }
}

pool "l40s" {
  gpu = "L40S"
}

tenant "research" {
  quota "l40s" {
    gpus = 1
  }
}

model "summarizer" {
  tenant      = tenant.research
  pool        = pool.l40s
  format      = "huggingface"
  storage_uri = "s3://ml-models/summarizer/v1?token=${var.storage_token}"
}
