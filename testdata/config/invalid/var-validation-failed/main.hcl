gpuform {
  stack = "ml-platform"
}

variable "research_gpus" {
  type    = number
  default = 2
  validation {
    condition     = var.research_gpus > 0 && var.research_gpus <= 8
    error_message = "research_gpus must be between 1 and 8: one node holds 8 GPUs."
  }
}

pool "l40s" {
  gpu = "L40S"
}

tenant "research" {
  quota "l40s" {
    gpus = var.research_gpus
  }
}
