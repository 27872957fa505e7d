// Package nvml is gpuform's NVIDIA Management Library provider: it reads a
// node's GPUs (inventory) and applies MIG layouts, through go-nvml's
// nvml.Interface only, so that the real library and go-nvml's simulated
// servers (pkg/nvml/mock/dgxa100, dgxh100, dgxh200) run the same code.
//
// Every entry point initialises NVML first through Open. When nvml.Init
// fails (no driver, no libnvidia-ml.so) the entry point returns one
// *UnavailableError and makes no further NVML call: go-nvml aborts the
// process on calls made after a failed Init. Panics raised by the library
// or by a simulated server are turned into errors, never a crash.
//
// Layouts are applied with explicit placements: the engine/mig solver
// chooses where each GPU instance goes (the simulated servers do not
// enforce placements, so gpuform must), existing instances that fit the
// target are kept, and a second apply of the same layout makes no call that
// changes anything.
//
// The package needs cgo, as go-nvml does (its types are declared in cgo
// files): every file but this one builds for linux with cgo only, and only
// cmd/gpuform/agent_nvml.go imports it, so that gpuform builds with
// CGO_ENABLED=0 on every platform. The simulated cluster's GPUs without cgo
// are providers/sim.CatalogGPUs, held to SimulatedGPUs by a test.
package nvml
