gpuform {
  stack = "ml-platform"
}

locals {
  prefix    = "${local.namespace}-"
  namespace = "${local.prefix}research"
}

tenant "research" {
  namespace = local.namespace
}
