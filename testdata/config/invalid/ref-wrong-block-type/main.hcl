gpuform {
  stack = "ml-platform"
}

pool "l40s" {
  gpu = "L40S"
}

tenant "research" {
  quota "l40s" {
    gpus = 2
  }
}

model "summarizer" {
  tenant      = tenant.research
  pool        = tenant.research
  format      = "huggingface"
  storage_uri = "s3://ml-models/summarizer/v1"
}
