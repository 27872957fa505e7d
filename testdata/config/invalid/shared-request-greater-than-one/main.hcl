gpuform {
  stack = "ml-platform"
}

pool "h100" {
  gpu = "H100-80GB"
  mps {
    replicas = 4
  }
}

tenant "serving" {
  quota "h100" {
    gpus = 8
  }
}

# MPS pools fail requests for more than one replica by default.
model "llm" {
  tenant      = tenant.serving
  pool        = pool.h100
  gpus        = 2
  format      = "huggingface"
  storage_uri = "hf://org/model"
}
