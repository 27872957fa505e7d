// Package outcome holds gpuform's outcome tests: what tenants' workloads
// get from a real GPU scheduling stack once gpuform applied a
// configuration. Its TestMain runs the API server harness with
// kube-scheduler and the Job controller (kubeapi --workloads) and the real
// Kueue controller manager (bin/kueue), stands in for the kubelets, the GPU
// Operator's mig-manager and KServe's controller, applies configurations
// with gpuform's pipeline (engine/stack over providers/kubernetes), then
// creates Jobs and pods with client-go and reads what Kueue admitted,
// preempted or held, where kube-scheduler bound the pods, and what the API
// server refused. The package has no code of its own.
package outcome
