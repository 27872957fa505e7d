tenant "research" {
  quota "l40s" {
    gpus = 2
  }
  priority   = priority.batch
  priorities = [priority.batch, priority.low]
}

model "summarizer" {
  tenant      = tenant.research
  pool        = pool.l40s
  format      = "huggingface"
  storage_uri = "s3://ml-models/summarizer/v1"
  replicas    = { min = 1, max = "many" }
}
