gpuform {
  stack     = "ml-platform"
  scheduler = "kueue"
}

# Six layouts offering every MIG profile of their GPU (39 resources in all),
# and a tenant with quotas on 14 pools: its ClusterQueue would list every
# resource in every flavor, 14 x 39 = 546 flavor-resource combinations,
# and Kueue refuses more than 512 in a resource group.
mig_layout "all-0" {
  gpu = "A30-24GB"
  device {
    indexes = [0]
    slices  = { "1g.6gb" = 1 }
  }
  device {
    indexes = [1]
    slices  = { "1g.6gb+me" = 1 }
  }
  device {
    indexes = [2]
    slices  = { "2g.12gb" = 1 }
  }
  device {
    indexes = [3]
    slices  = { "2g.12gb+me" = 1 }
  }
  device {
    indexes = [4]
    slices  = { "4g.24gb" = 1 }
  }
}

mig_layout "all-1" {
  gpu = "A100-40GB"
  device {
    indexes = [0]
    slices  = { "1g.5gb" = 1 }
  }
  device {
    indexes = [1]
    slices  = { "1g.5gb+me" = 1 }
  }
  device {
    indexes = [2]
    slices  = { "1g.10gb" = 1 }
  }
  device {
    indexes = [3]
    slices  = { "2g.10gb" = 1 }
  }
  device {
    indexes = [4]
    slices  = { "3g.20gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "4g.20gb" = 1 }
  }
  device {
    indexes = [6]
    slices  = { "7g.40gb" = 1 }
  }
}

mig_layout "all-2" {
  gpu = "A100-80GB"
  device {
    indexes = [0]
    slices  = { "1g.10gb" = 1 }
  }
  device {
    indexes = [1]
    slices  = { "1g.10gb+me" = 1 }
  }
  device {
    indexes = [2]
    slices  = { "1g.20gb" = 1 }
  }
  device {
    indexes = [3]
    slices  = { "2g.20gb" = 1 }
  }
  device {
    indexes = [4]
    slices  = { "3g.40gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "4g.40gb" = 1 }
  }
  device {
    indexes = [6]
    slices  = { "7g.80gb" = 1 }
  }
}

mig_layout "all-3" {
  gpu = "H100-94GB"
  device {
    indexes = [0]
    slices  = { "1g.12gb" = 1 }
  }
  device {
    indexes = [1]
    slices  = { "1g.12gb+me" = 1 }
  }
  device {
    indexes = [2]
    slices  = { "1g.24gb" = 1 }
  }
  device {
    indexes = [3]
    slices  = { "2g.24gb" = 1 }
  }
  device {
    indexes = [4]
    slices  = { "3g.47gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "4g.47gb" = 1 }
  }
  device {
    indexes = [6]
    slices  = { "7g.94gb" = 1 }
  }
}

mig_layout "all-4" {
  gpu = "H200-141GB"
  device {
    indexes = [0]
    slices  = { "1g.18gb" = 1 }
  }
  device {
    indexes = [1]
    slices  = { "1g.18gb+me" = 1 }
  }
  device {
    indexes = [2]
    slices  = { "1g.35gb" = 1 }
  }
  device {
    indexes = [3]
    slices  = { "2g.35gb" = 1 }
  }
  device {
    indexes = [4]
    slices  = { "3g.71gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "4g.71gb" = 1 }
  }
  device {
    indexes = [6]
    slices  = { "7g.141gb" = 1 }
  }
}

mig_layout "all-5" {
  gpu = "B200-180GB"
  device {
    indexes = [0]
    slices  = { "1g.23gb" = 1 }
  }
  device {
    indexes = [1]
    slices  = { "1g.23gb+me" = 1 }
  }
  device {
    indexes = [2]
    slices  = { "1g.45gb" = 1 }
  }
  device {
    indexes = [3]
    slices  = { "2g.45gb" = 1 }
  }
  device {
    indexes = [4]
    slices  = { "3g.90gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "4g.90gb" = 1 }
  }
  device {
    indexes = [6]
    slices  = { "7g.180gb" = 1 }
  }
}

pool "m00" {
  gpu        = "A30-24GB"
  mig_layout = mig_layout.all-0
}

pool "m01" {
  gpu        = "A100-40GB"
  mig_layout = mig_layout.all-1
}

pool "m02" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.all-2
}

pool "m03" {
  gpu        = "H100-94GB"
  mig_layout = mig_layout.all-3
}

pool "m04" {
  gpu        = "H200-141GB"
  mig_layout = mig_layout.all-4
}

pool "m05" {
  gpu        = "B200-180GB"
  mig_layout = mig_layout.all-5
}

pool "m06" {
  gpu        = "A30-24GB"
  mig_layout = mig_layout.all-0
}

pool "m07" {
  gpu        = "A100-40GB"
  mig_layout = mig_layout.all-1
}

pool "m08" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.all-2
}

pool "m09" {
  gpu        = "H100-94GB"
  mig_layout = mig_layout.all-3
}

pool "m10" {
  gpu        = "H200-141GB"
  mig_layout = mig_layout.all-4
}

pool "m11" {
  gpu        = "B200-180GB"
  mig_layout = mig_layout.all-5
}

pool "m12" {
  gpu        = "A30-24GB"
  mig_layout = mig_layout.all-0
}

pool "m13" {
  gpu        = "A100-40GB"
  mig_layout = mig_layout.all-1
}

tenant "research" {
  quota "m00" {
    slices = { "1g.6gb" = 1, "1g.6gb+me" = 1, "2g.12gb" = 1, "2g.12gb+me" = 1, "4g.24gb" = 1 }
  }
  quota "m01" {
    slices = { "1g.5gb" = 1, "1g.5gb+me" = 1, "1g.10gb" = 1, "2g.10gb" = 1, "3g.20gb" = 1, "4g.20gb" = 1, "7g.40gb" = 1 }
  }
  quota "m02" {
    slices = { "1g.10gb" = 1, "1g.10gb+me" = 1, "1g.20gb" = 1, "2g.20gb" = 1, "3g.40gb" = 1, "4g.40gb" = 1, "7g.80gb" = 1 }
  }
  quota "m03" {
    slices = { "1g.12gb" = 1, "1g.12gb+me" = 1, "1g.24gb" = 1, "2g.24gb" = 1, "3g.47gb" = 1, "4g.47gb" = 1, "7g.94gb" = 1 }
  }
  quota "m04" {
    slices = { "1g.18gb" = 1, "1g.18gb+me" = 1, "1g.35gb" = 1, "2g.35gb" = 1, "3g.71gb" = 1, "4g.71gb" = 1, "7g.141gb" = 1 }
  }
  quota "m05" {
    slices = { "1g.23gb" = 1, "1g.23gb+me" = 1, "1g.45gb" = 1, "2g.45gb" = 1, "3g.90gb" = 1, "4g.90gb" = 1, "7g.180gb" = 1 }
  }
  quota "m06" {
    slices = { "1g.6gb" = 1, "1g.6gb+me" = 1, "2g.12gb" = 1, "2g.12gb+me" = 1, "4g.24gb" = 1 }
  }
  quota "m07" {
    slices = { "1g.5gb" = 1, "1g.5gb+me" = 1, "1g.10gb" = 1, "2g.10gb" = 1, "3g.20gb" = 1, "4g.20gb" = 1, "7g.40gb" = 1 }
  }
  quota "m08" {
    slices = { "1g.10gb" = 1, "1g.10gb+me" = 1, "1g.20gb" = 1, "2g.20gb" = 1, "3g.40gb" = 1, "4g.40gb" = 1, "7g.80gb" = 1 }
  }
  quota "m09" {
    slices = { "1g.12gb" = 1, "1g.12gb+me" = 1, "1g.24gb" = 1, "2g.24gb" = 1, "3g.47gb" = 1, "4g.47gb" = 1, "7g.94gb" = 1 }
  }
  quota "m10" {
    slices = { "1g.18gb" = 1, "1g.18gb+me" = 1, "1g.35gb" = 1, "2g.35gb" = 1, "3g.71gb" = 1, "4g.71gb" = 1, "7g.141gb" = 1 }
  }
  quota "m11" {
    slices = { "1g.23gb" = 1, "1g.23gb+me" = 1, "1g.45gb" = 1, "2g.45gb" = 1, "3g.90gb" = 1, "4g.90gb" = 1, "7g.180gb" = 1 }
  }
  quota "m12" {
    slices = { "1g.6gb" = 1, "1g.6gb+me" = 1, "2g.12gb" = 1, "2g.12gb+me" = 1, "4g.24gb" = 1 }
  }
  quota "m13" {
    slices = { "1g.5gb" = 1, "1g.5gb+me" = 1, "1g.10gb" = 1, "2g.10gb" = 1, "3g.20gb" = 1, "4g.20gb" = 1, "7g.40gb" = 1 }
  }
}
