gpuform {
  stack = "ml-platform"
}

locals {
  admins = ["group:platform-admins"]
}

tenant "research" {
  admins = concat(local.admin, ["group:research-admins"])
}
