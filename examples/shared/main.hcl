# GPUs shared without MIG: an MPS pool, a time-sliced pool whose replicas
# are advertised as nvidia.com/gpu.shared (so they never add up with whole
# GPUs in one quota), a pool of whole GPUs with its driver pinned through
# the GPU Operator, and a model with environment variables; isolation.hcl
# adds a tainted pool, a sandboxed tenant and an autoscaled model.
gpuform {
  stack       = "shared"
  scheduler   = "kueue"
  pin_drivers = true
}

cluster {
  simulated = "cluster.sim.hcl"
}

priority "standard" {
  value = 1000
}

# MPS: each H100 serves up to 4 models' processes at once, each with its
# share of the GPU's memory and compute (the device plugin starts an MPS
# server per GPU). A pod asks for one replica (fail_requests_greater_than_one
# is true for MPS unless set otherwise).
pool "h100-mps" {
  gpu = "H100-80GB"
  mps {
    replicas = 4
  }
}

# Time-slicing: each A30 is shared by 3 pods in turn. rename_by_default
# advertises the replicas as nvidia.com/gpu.shared, apart from whole GPUs.
pool "a30-shared" {
  gpu = "A30-24GB"
  time_slicing {
    replicas          = 3
    rename_by_default = true
  }
}

# Whole GPUs, with the driver the nodes must run: pin_drivers installs it
# through a GPU Operator NVIDIADriver for this pool's nodes.
pool "h200" {
  gpu            = "H200-141GB"
  driver_version = "550.54.15"
}

tenant "inference" {
  quota "h100-mps" {
    gpus = 8
  }
  quota "a30-shared" {
    gpus = 6
  }
  priorities       = [priority.standard]
  default_priority = priority.standard
}

tenant "training" {
  quota "h200" {
    gpus = 4
  }
  quota "a30-shared" {
    gpus = 6
  }
  priorities       = [priority.standard]
  default_priority = priority.standard
}

model "chat" {
  tenant      = tenant.inference
  pool        = pool.h100-mps
  format      = "huggingface"
  storage_uri = "hf://meta-llama/Llama-3.1-8B-Instruct"
  replicas    = { min = 2, max = 4 }
  env = {
    PYTORCH_CUDA_ALLOC_CONF = "expandable_segments:True"
    HF_HUB_OFFLINE          = "1"
  }
}

model "embeddings" {
  tenant      = tenant.inference
  pool        = pool.a30-shared
  format      = "onnx"
  storage_uri = "s3://models/embeddings/v2"
}
