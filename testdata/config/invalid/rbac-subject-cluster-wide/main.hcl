gpuform {
  stack = "ml-platform"
}

pool "l40s" {
  gpu = "L40S"
}

tenant "research" {
  quota "l40s" {
    gpus = 2
  }
  admins  = ["group:research-admins", "group:system:unauthenticated"]
  editors = ["group:system:masters", "serviceaccount:kube-system:generic-garbage-collector"]
  viewers = ["user:system:anonymous", "group:system:authenticated"]
}
