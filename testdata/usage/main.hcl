# The configuration of gpuform usage's tests (cmd/gpuform
# usage_integration_test.go): two priced pools, one of MIG slices, and
# three tenants. The test's history of kube-state-metrics and DCGM series is
# written for these names.
gpuform {
  stack = "usage-test"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "h100" {
  gpu                = "H100-80GB"
  price_per_gpu_hour = 4
  currency           = "EUR"
}

pool "a100" {
  gpu                = "A100-80GB"
  mig_layout         = mig_layout.halves
  price_per_gpu_hour = 2.8
  currency           = "EUR"
}

tenant "risk" {
  quota "h100" {
    gpus = 4
  }
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
}

tenant "fraud" {
  quota "h100" {
    gpus = 2
  }
}

tenant "search" {
  namespace = "search-prod"
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
}
