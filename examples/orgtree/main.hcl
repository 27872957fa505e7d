# An organisation tree under Kueue: the ai department holds research and
# product, each with tenants; platform is a tree of its own. Each
# department is a Kueue Cohort with quota of its own that everything
# under it shares; a tenant borrows what its siblings, its department
# and (up to each department's borrowing_limit) its ancestors leave free,
# and never from another tree (platform never from ai, nor ai from
# platform).
gpuform {
  stack     = "org"
  scheduler = "kueue"
}

cluster {
  simulated = "cluster.sim.hcl"
}

priority "batch" {
  value      = 1000
  preemption = "Never"
}

priority "urgent" {
  value      = 100000
  preemption = "PreemptLowerPriority"
}

pool "a100" {
  gpu = "A100-80GB"
}

pool "h100" {
  gpu = "H100-80GB"
}

# ai: 2 A100s of its own, which research and product share.
department "ai" {
  quota "a100" {
    gpus = 2
  }
}

# research: 1 H100 of its own; its tenants may borrow at most 2 A100s of
# ai's subtree and lend it at most 1.
department "research" {
  parent = department.ai
  weight = 2
  quota "a100" {
    gpus            = 0
    borrowing_limit = { gpus = 2 }
    lending_limit   = { gpus = 1 }
  }
  quota "h100" {
    gpus = 1
  }
}

department "product" {
  parent = department.ai
}

# platform: a tree of its own, with no quota beyond its tenants'.
department "platform" {}

tenant "vision" {
  department       = department.research
  priorities       = [priority.urgent, priority.batch]
  default_priority = priority.batch
  quota "a100" {
    gpus = 2
  }
  quota "h100" {
    gpus = 2
  }
}

tenant "speech" {
  department       = department.research
  default_priority = priority.batch
  quota "a100" {
    gpus          = 1
    lending_limit = { gpus = 0 }
  }
  quota "h100" {
    gpus = 2
  }
}

tenant "search" {
  department       = department.product
  default_priority = priority.batch
  quota "a100" {
    gpus = 2
  }
}

tenant "ads" {
  department       = department.product
  default_priority = priority.batch
  quota "a100" {
    gpus = 1
  }
}

tenant "infra" {
  department       = department.platform
  default_priority = priority.batch
  quota "h100" {
    gpus = 3
  }
}
