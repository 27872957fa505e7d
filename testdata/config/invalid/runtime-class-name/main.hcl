gpuform {
  stack = "isolation"
}

tenant "payments" {
  runtime_class = ["gvisor", "Kata_QEMU"]
}
