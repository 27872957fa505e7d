gpuform {
  stack = "ml-platform"
}

variable "model_bucket" {
  type    = string
  default = "s3://ml-models"
}

priority "batch" {
  value = 1000
}

pool "l40s" {
  gpu = "L40S"
}

tenant "research" {
  quota "l40s" {
    gpus = 2
  }
  priorities = [priority.batch]
}

model "summarizer" {
  tenant      = tenant.research
  pool        = pool.l40s
  format      = "huggingface"
  storage_uri = "${var.models_bucket}/summarizer/v1"
}
