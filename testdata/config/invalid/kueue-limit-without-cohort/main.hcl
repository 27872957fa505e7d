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

tenant "research" {
  # No cohort: nobody to borrow from, and Kueue refuses the limit.
  cohort = ""
  quota "a100" {
    slices          = { "1g.10gb" = 2 }
    borrowing_limit = { "1g.10gb" = 1 }
  }
}
