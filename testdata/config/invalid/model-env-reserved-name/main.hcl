gpuform {
  stack = "ml-platform"
}

pool "l4" {
  gpu = "L4"
}

tenant "serving" {
  quota "l4" {
    gpus = 2
  }
}

# NVIDIA_VISIBLE_DEVICES would give the container GPUs it was not
# allocated; "CUDA-DEVICE" is not a variable name.
model "ocr" {
  tenant      = tenant.serving
  pool        = pool.l4
  format      = "onnx"
  storage_uri = "s3://models/ocr"
  env = {
    NVIDIA_VISIBLE_DEVICES = "all"
    "CUDA-DEVICE"          = "0"
  }
}
