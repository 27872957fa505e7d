gpuform {
  stack     = "isolation"
  scheduler = "kueue"
}

pool "secure" {
  gpu = "NVIDIA-H100-80GB-HBM3"
  taint {
    key = "gpuform.dev/t0"
  }
  taint {
    key = "gpuform.dev/t1"
  }
  taint {
    key = "gpuform.dev/t2"
  }
  taint {
    key = "gpuform.dev/t3"
  }
  taint {
    key = "gpuform.dev/t4"
  }
  taint {
    key = "gpuform.dev/t5"
  }
  taint {
    key = "gpuform.dev/t6"
  }
  taint {
    key = "gpuform.dev/t7"
  }
  taint {
    key = "gpuform.dev/t8"
  }
}
