gpuform {
  stack = "ml-platform"
}

variable "model_bucket" {
  type        = string
  description = "Where the model artifacts live."
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
  storage_uri = "${var.model_bucket}/summarizer/v1"
}
