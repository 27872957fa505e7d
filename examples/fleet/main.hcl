# A fleet from one configuration: two training regions and a burst
# cluster at a cloud, one org tree of two departments. Priorities, the
# org tree and the tenants are written once; each cluster gets what is
# placed on it, with its own figures from its values.
#
#   gpuform validate                       every cluster, one line each
#   gpuform plan --cluster eu-train        one member (the fleet commands)
gpuform {
  stack     = "fleet"
  scheduler = "kueue"
}

# eu-train is also the MultiKueue manager: jobs of a tenant with
# dispatch = "multikueue" are submitted there and run on a worker.
cluster "eu-train" {
  simulated = "eu-train.sim.hcl"
  role      = "manager"
  labels    = { region = "eu", purpose = "train" }
  values    = { vision_a100 = 4, speech_a100 = 2 }
}

cluster "us-train" {
  simulated         = "us-train.sim.hcl"
  kubeconfig_secret = "us-train"
  labels            = { region = "us", purpose = "train" }
  values            = { vision_a100 = 2, speech_a100 = 2 }
}

# The burst cluster has H100s only, and no A100 figures: the tenants'
# quotas read them with lookup() and a default.
cluster "burst" {
  simulated         = "burst.sim.hcl"
  kubeconfig_secret = "burst"
  labels            = { region = "us", purpose = "burst" }
}

priority "batch" {
  value      = 1000
  preemption = "Never"
}

priority "urgent" {
  value      = 100000
  preemption = "PreemptLowerPriority"
}

# On both training clusters, whose A100 nodes are labelled with the
# cluster's name. Every block is evaluated for every cluster, burst too:
# an expression must hold on each (see cluster.values below).
pool "a100" {
  gpu              = "A100-80GB"
  cluster_selector = { purpose = "train" }
  node_selector    = { "gpuform.dev/node-group" = "a100-${cluster.name}" }
}

# Only at the cloud.
pool "h100" {
  gpu      = "H100-80GB"
  clusters = ["burst"]
}

department "ai" {}

department "platform" {}

# On eu-train and us-train (where a100 is) and burst (where h100 is).
tenant "vision" {
  department       = department.ai
  priorities       = [priority.urgent, priority.batch]
  default_priority = priority.batch
  quota "a100" {
    gpus = lookup(cluster.values, "vision_a100", 0)
  }
  quota "h100" {
    gpus = 2
  }
}

# Its jobs are submitted on the manager (eu-train) and MultiKueue runs
# them on a training cluster with room.
tenant "speech" {
  department       = department.ai
  default_priority = priority.batch
  dispatch         = "multikueue"
  quota "a100" {
    gpus = lookup(cluster.values, "speech_a100", 0)
  }
}

# Narrowed by its own placement: only in the EU, though a100 is in the US
# too.
tenant "infra" {
  department       = department.platform
  default_priority = priority.batch
  clusters         = ["eu-train"]
  quota "a100" {
    gpus = 1
  }
}

# Where both vision and h100 are: burst.
model "detector" {
  tenant      = tenant.vision
  pool        = pool.h100
  gpus        = 1
  format      = "pytorch"
  storage_uri = "s3://models/detector/v2"
  priority    = priority.urgent
}
