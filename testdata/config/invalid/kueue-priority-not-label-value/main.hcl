gpuform {
  stack     = "ml-platform"
  scheduler = "kueue"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.balanced
}

# A valid PriorityClass name (up to 253 characters), but on Kueue each model
# carries it as the label kueue.x-k8s.io/priority-class (at most 63).
priority "interactive-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" {
  value = 1000
}

tenant "research" {
  quota "a100" {
    slices = { "1g.10gb" = 2 }
  }
  default_priority = priority.interactive-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
}

model "chat" {
  tenant      = tenant.research
  pool        = pool.a100
  slice       = "1g.10gb"
  format      = "onnx"
  storage_uri = "s3://models/chat"
}
