package v1

import (
	"encoding/json"
	"fmt"
)

// InventoryVersion is the Version of the Inventory this package describes.
const InventoryVersion = 1

// Limits on a published inventory; ParseInventory rejects larger ones
// rather than trust them.
const (
	// MaxInventoryBytes bounds the annotation's size.
	MaxInventoryBytes = 64 << 10
	// MaxGPUs bounds the GPUs of one node, and so their indexes.
	MaxGPUs = 64
	// MemorySlots is the number of MIG memory slots of every GPU the
	// catalog knows: instances lie within slots 0..MemorySlots-1.
	MemorySlots = 8
	// maxProcesses bounds the processes listed for one GPU.
	maxProcesses = 4096
)

// Inventory is what NVML reports of one machine's GPUs: the value of
// annotation AnnotInventory, as JSON.
type Inventory struct {
	// Version is InventoryVersion.
	Version int `json:"version"`
	// DriverVersion is the NVIDIA driver version, e.g. "550.54.15".
	DriverVersion string `json:"driver_version"`
	// CUDAVersion is the CUDA version the driver supports, e.g. "12.4".
	CUDAVersion string `json:"cuda_version,omitempty"`
	// GPUs are the GPUs in NVML index order.
	GPUs []GPU `json:"gpus"`
	// Warnings are what could not be read, e.g. MIG instances without root.
	Warnings []string `json:"warnings,omitempty"`
}

// GPU is one physical GPU of an Inventory.
type GPU struct {
	// Index is the NVML device index.
	Index int `json:"index"`
	// UUID is the GPU's UUID, "GPU-...".
	UUID string `json:"uuid"`
	// Name is the product name NVML reports, e.g. "NVIDIA H100 80GB HBM3".
	Name string `json:"name"`
	// Model is the engine/mig catalog key, e.g. "H100-80GB"; empty when the
	// catalog does not know the GPU.
	Model string `json:"model,omitempty"`
	// MemoryMiB is the total memory.
	MemoryMiB int `json:"memory_mib"`
	// MIGCapable is true when the GPU supports MIG.
	MIGCapable bool `json:"mig_capable,omitempty"`
	// MIGEnabled is the current MIG mode.
	MIGEnabled bool `json:"mig_enabled"`
	// MIGPending is true when the pending MIG mode differs from the current
	// one: a GPU reset (in practice a reboot) is needed to apply it. The
	// pending mode is MIGEnabled != MIGPending.
	MIGPending bool `json:"mig_pending,omitempty"`
	// Instances are the MIG GPU instances, sorted by placement start.
	Instances []GPUInstance `json:"instances,omitempty"`
	// Processes are the processes running on the GPU (on any of its MIG
	// instances), sorted by PID.
	Processes []Process `json:"processes,omitempty"`
}

// Instance is a MIG profile at a placement: Size memory slots from Start.
type Instance struct {
	// Profile is the catalog profile name, e.g. "1g.10gb+me". A profile
	// the catalog does not know is named from what NVML reports.
	Profile string `json:"profile"`
	// Start is the first memory slot.
	Start int `json:"start"`
	// Size is the number of memory slots.
	Size int `json:"size"`
}

// GPUInstance is one MIG GPU instance.
type GPUInstance struct {
	// ID is NVML's GPU instance ID.
	ID int `json:"id"`
	Instance
	// ComputeInstances are the compute instances inside it.
	ComputeInstances []ComputeInstance `json:"compute_instances,omitempty"`
}

// ComputeInstance is one compute instance inside a GPU instance.
type ComputeInstance struct {
	// ID is NVML's compute instance ID, unique within its GPU instance.
	ID int `json:"id"`
	// Profile is the GPU instance's profile when the compute instance uses
	// all of its compute slices, else "<n>c.<profile>" as mig-parted spells
	// it, e.g. "1c.3g.40gb".
	Profile string `json:"profile"`
	// Start is the first compute slice within the GPU instance.
	Start int `json:"start"`
	// Size is the number of compute slices.
	Size int `json:"size"`
}

// Process is a process running on a GPU.
type Process struct {
	// PID is the process ID (in the host's PID namespace).
	PID int `json:"pid"`
	// UsedMemoryMiB is the GPU memory it uses; 0 when NVML does not say.
	UsedMemoryMiB int `json:"used_memory_mib,omitempty"`
	// GPUInstance is the ID of the MIG GPU instance it runs on, if any.
	GPUInstance *int `json:"gpu_instance,omitempty"`
	// ComputeInstance is the ID of the compute instance it runs on, if any.
	ComputeInstance *int `json:"compute_instance,omitempty"`
}

// GPU returns the GPU with NVML index index, or nil.
func (inv *Inventory) GPU(index int) *GPU {
	for i := range inv.GPUs {
		if inv.GPUs[i].Index == index {
			return &inv.GPUs[i]
		}
	}
	return nil
}

// ModelOrName is the GPU's catalog key when the agent knew it, else the
// product name NVML reports.
func (g *GPU) ModelOrName() string {
	if g.Model != "" {
		return g.Model
	}
	return g.Name
}

// Slices counts g's MIG GPU instances by profile; nil when there are none.
func (g *GPU) Slices() map[string]int {
	var out map[string]int
	for _, in := range g.Instances {
		if out == nil {
			out = map[string]int{}
		}
		out[in.Profile]++
	}
	return out
}

// PIDs returns the PIDs of g's processes.
func (g *GPU) PIDs() []int {
	var out []int
	for _, p := range g.Processes {
		out = append(out, p.PID)
	}
	return out
}

// String returns "profile@start:size".
func (in Instance) String() string { return fmt.Sprintf("%s@%d:%d", in.Profile, in.Start, in.Size) }

// ParseInventory decodes and checks an AnnotInventory annotation written by
// something gpuform cannot vouch for. It rejects content over
// MaxInventoryBytes, malformed JSON, another version, more than MaxGPUs
// GPUs, invalid or repeated GPU indexes, and GPUs with implausible memory,
// instance or process lists or MIG instances outside the memory slots.
// What the inventory says is checked against the node elsewhere.
func ParseInventory(s string) (*Inventory, error) {
	if len(s) > MaxInventoryBytes {
		return nil, fmt.Errorf("inventory is %d bytes, over the limit of %d", len(s), MaxInventoryBytes)
	}
	var inv Inventory
	if err := json.Unmarshal([]byte(s), &inv); err != nil {
		return nil, fmt.Errorf("inventory is not valid JSON: %w", err)
	}
	if inv.Version != InventoryVersion {
		return nil, fmt.Errorf("inventory version %d is not %d", inv.Version, InventoryVersion)
	}
	if len(inv.GPUs) > MaxGPUs {
		return nil, fmt.Errorf("inventory lists %d GPUs, more than a node can hold (%d)", len(inv.GPUs), MaxGPUs)
	}
	seen := map[int]bool{}
	for _, g := range inv.GPUs {
		if g.Index < 0 || g.Index >= MaxGPUs || seen[g.Index] {
			return nil, fmt.Errorf("inventory has an invalid or repeated GPU index %d", g.Index)
		}
		seen[g.Index] = true
		if err := checkGPU(&g); err != nil {
			return nil, err
		}
	}
	return &inv, nil
}

// checkGPU checks one GPU of a published inventory on its own.
func checkGPU(g *GPU) error {
	if g.MemoryMiB < 0 || len(g.Instances) > MemorySlots || len(g.Processes) > maxProcesses {
		return fmt.Errorf("inventory GPU %d is implausible", g.Index)
	}
	used := 0
	for _, in := range g.Instances {
		if in.Start < 0 || in.Size < 1 || in.Size > MemorySlots || in.Start > MemorySlots-in.Size || in.Profile == "" {
			return fmt.Errorf("inventory GPU %d has an impossible MIG instance %q at %d:%d", g.Index, in.Profile, in.Start, in.Size)
		}
		used += in.Size
	}
	if used > MemorySlots {
		return fmt.Errorf("inventory GPU %d has MIG instances over more memory slots than a GPU has", g.Index)
	}
	return nil
}
