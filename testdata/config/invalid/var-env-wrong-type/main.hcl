gpuform {
  stack = "ml-platform"
}

variable "research_gpus" {
  type        = number
  default     = 2
  description = "Whole L40S GPUs reserved for the research team."
}

pool "l40s" {
  gpu = "L40S"
  time_slicing {
    replicas = 2
  }
}

tenant "research" {
  quota "l40s" {
    gpus = var.research_gpus
  }
}
