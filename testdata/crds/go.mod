// The versions of the upstream projects whose CRDs the test harness serves
// (internal/kubeapitest reads them from the Go module cache; see README.md).
// No Go code: this module only pins the versions, and go.sum their content.
module github.com/gpuform/gpuform/testdata/crds

go 1.26

require (
	// The GPU Operator's release v25.3.4: the module proxy serves its tags
	// (v24 and later) only as pseudo-versions of the tagged commit.
	github.com/NVIDIA/gpu-operator v0.0.0-20250917190837-d73a0086a6ba
	github.com/prometheus-operator/prometheus-operator v0.85.0
	sigs.k8s.io/kueue v0.17.0
)
