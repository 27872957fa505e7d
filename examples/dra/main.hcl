# A DRA pool beside a device-plugin pool. The A100s are partitioned into
# MIG slices and handed out through Dynamic Resource Allocation (NVIDIA's
# DRA driver, Kubernetes >= 1.34): each profile becomes a DeviceClass, and
# each tenant's ResourceQuota counts devices per class, so a slice quota on
# this pool cannot be spent on another. The L40S pool keeps the device
# plugin's nvidia.com/gpu. Workloads on the A100s ask through a
# ResourceClaim of class gpuform-dra-a100-1g-10gb or gpuform-dra-a100-3g-40gb;
# the model "detector" gets a ResourceClaimTemplate
# vision/detector-a100-1g-10gb-1 asking for one 1g.10gb slice of that
# class, from which each of its pods claims.
gpuform {
  stack     = "dra"
  scheduler = "none"
}

cluster {
  simulated = "cluster.sim.hcl"
}

mig_layout "inference" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 4, "3g.40gb" = 1 }
}

pool "a100" {
  gpu           = "A100-80GB"
  mode          = "dra"
  mig_layout    = mig_layout.inference
  node_selector = { "gpuform.dev/node-group" = "a100" }
}

pool "l40s" {
  gpu           = "L40S"
  node_selector = { "gpuform.dev/node-group" = "l40s" }
}

tenant "vision" {
  namespace = "vision"
  admins    = ["group:vision-admins"]
  quota "a100" {
    slices = { "1g.10gb" = 4, "3g.40gb" = 1 }
  }
}

tenant "speech" {
  namespace = "speech"
  admins    = ["group:speech-admins"]
  quota "l40s" {
    gpus = 2
  }
}

model "detector" {
  tenant      = tenant.vision
  pool        = pool.a100
  slice       = "1g.10gb"
  format      = "onnx"
  storage_uri = "s3://models/detector"
  replicas    = { min = 1, max = 4 }
}
