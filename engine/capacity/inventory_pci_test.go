package capacity_test

import (
	"encoding/json"
	"testing"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestInventoryByPCIDeviceID: a node whose GPU Feature Discovery product
// label the catalog does not know is still recognised by the PCI device ID
// in Node Feature Discovery's PCI label (when its deviceLabelFields include
// the device), and an agent that recognised the board by its ID agrees with
// those labels.
func TestInventoryByPCIDeviceID(t *testing.T) {
	cat := mig.Default()
	tests := []struct {
		name   string
		labels map[string]any
		want   string
	}{
		{"nfd class_vendor_device", map[string]any{
			"nvidia.com/gpu.product": "NVIDIA-H800-NVL-Rev2", "nvidia.com/gpu.count": "2",
			"feature.node.kubernetes.io/pci-0302_10de_233a.present": "true",
		}, "H100-94GB"},
		{"nfd vendor_device", map[string]any{
			"nvidia.com/gpu.product": "NVIDIA-Future-Board", "nvidia.com/gpu.count": "2",
			"feature.node.kubernetes.io/pci-10de_2941.present":      "true",
			"feature.node.kubernetes.io/pci-0680_10de_22a3.present": "true", // an NVSwitch: not a GPU
		}, "GB200-186GB"},
		{"nfd default fields carry no device", map[string]any{
			"nvidia.com/gpu.product": "NVIDIA-H800-NVL-Rev2", "nvidia.com/gpu.count": "2",
			"feature.node.kubernetes.io/pci-0302_10de.present": "true",
		}, "NVIDIA-H800-NVL-Rev2"},
		{"two models", map[string]any{
			"nvidia.com/gpu.product": "NVIDIA-Mixed", "nvidia.com/gpu.count": "2",
			"feature.node.kubernetes.io/pci-0302_10de_233a.present": "true",
			"feature.node.kubernetes.io/pci-0302_10de_2330.present": "true",
		}, "NVIDIA-Mixed"},
		{"product known first", map[string]any{
			"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "2",
			"feature.node.kubernetes.io/pci-0302_10de_233a.present": "true",
		}, "H100-80GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := capacity.InventoryOf(inventoryNode(tt.labels, "2", ""), cat)
			if inv.Source != capacity.SourceGFD || inv.Model != tt.want {
				t.Errorf("source %s, model %q; want gfd, %q", inv.Source, inv.Model, tt.want)
			}
		})
	}

	// The agent read the board's PCI device ID (providers/nvml) and wrote
	// the catalog key; the labels say the same through NFD: no warning.
	annot := agentv1.Inventory{Version: 1, DriverVersion: "570.1", GPUs: []agentv1.GPU{
		{Index: 0, UUID: "GPU-0", Name: "NVIDIA H800 NVL Rev2", Model: "H100-94GB", MemoryMiB: 95830},
		{Index: 1, UUID: "GPU-1", Name: "NVIDIA H800 NVL Rev2", Model: "H100-94GB", MemoryMiB: 95830},
	}}
	b, _ := json.Marshal(annot)
	inv := capacity.InventoryOf(inventoryNode(tests[0].labels, "2", string(b)), cat)
	if inv.Source != capacity.SourceAgent || inv.Model != "H100-94GB" || inv.Warning != "" {
		t.Errorf("agent inventory: %+v; want the agent's H100-94GB, no warning", inv)
	}
}
