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
  tenant = tenant.research
  pool   = pool.l40s
  format = "huggingface"
}
