# The smallest useful gpuform stack: one MIG pool, two tenants, one model.
gpuform {
  stack = "quickstart"
}

cluster {
  simulated = "cluster.sim.hcl"
}

priority "standard" {
  value = 1000
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.halves
  # gpuform's GPU alerts (a PrometheusRule): utilization, memory,
  # temperature, XID errors.
  alerts {}
}

tenant "research" {
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
  priorities       = [priority.standard]
  default_priority = priority.standard
}

tenant "serving" {
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
  priorities       = [priority.standard]
  default_priority = priority.standard
  # Quota saturation and pods waiting for slices, at the defaults.
  alerts {}
}

model "sentiment" {
  tenant      = tenant.serving
  pool        = pool.a100
  slice       = "3g.40gb"
  format      = "sklearn"
  storage_uri = "gs://kfserving-examples/models/sklearn/1.0/model"
  priority    = priority.standard
}
