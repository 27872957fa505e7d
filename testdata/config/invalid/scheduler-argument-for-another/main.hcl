gpuform {
  stack = "ml-platform"
  # No scheduler: "none", the default kube-scheduler, which has no cohorts.
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.balanced
}

tenant "research" {
  # Only Kueue reads a cohort: under scheduler "none" it would do nothing.
  cohort = "labs"
  quota "a100" {
    slices = { "1g.10gb" = 2 }
  }
}
