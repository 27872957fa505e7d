gpuform {
  stack = "ml-platform"
}

variable "registry_team" {
  type      = list(string)
  sensitive = true
}

tenant "research" {
  viewers = var.registry_team
}
