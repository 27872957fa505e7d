# A fleet with a mistake of each kind: a second manager, an unknown member
# in a placement, a model placed where its pool is not, and a value one
# member lacks (reported for that member only).
gpuform {
  stack = "fleet"
}

cluster "eu" {
  role   = "manager"
  values = { gpus = 4 }
}

cluster "us" {
  role = "manager"
}

pool "a100" {
  gpu      = "A100-80GB"
  clusters = ["eu", "asia"]
}

pool "h100" {
  gpu      = "H100-80GB"
  clusters = ["us"]
}

tenant "vision" {
  quota "a100" {
    gpus = cluster.values.gpus
  }
  quota "h100" {
    gpus = 1
  }
}

model "detector" {
  tenant      = tenant.vision
  pool        = pool.h100
  format      = "pytorch"
  storage_uri = "s3://models/detector"
  clusters    = ["eu"]
}
