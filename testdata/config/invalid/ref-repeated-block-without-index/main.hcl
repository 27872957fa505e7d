gpuform {
  stack = "ml-platform"
}

pool "l40s" {
  gpu = "L40S"
}

tenant "team" {
  for_each = { research = 2, serving = 1 }
  quota "l40s" {
    gpus = each.value
  }
}

model "summarizer" {
  tenant      = tenant.team
  pool        = pool.l40s
  format      = "huggingface"
  storage_uri = "s3://ml-models/summarizer/v1"
}
