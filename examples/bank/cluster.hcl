# Plan and apply the bank scenario without a cluster: the embedded simulated
# cluster in cluster.sim.hcl. Remove this file (or pass --kubeconfig and
# --context) to plan against a real cluster.
cluster {
  simulated = "cluster.sim.hcl"
}
