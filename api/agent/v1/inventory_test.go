package v1_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
)

func TestParseInventory(t *testing.T) {
	two := 2
	in := agentv1.Inventory{Version: agentv1.InventoryVersion, DriverVersion: "550.54.15", CUDAVersion: "12.4", GPUs: []agentv1.GPU{
		{Index: 0, UUID: "GPU-0", Name: "NVIDIA A100-SXM4-80GB", Model: "A100-80GB", MemoryMiB: 81920, MIGCapable: true, MIGEnabled: true,
			Instances: []agentv1.GPUInstance{{ID: 1, Instance: agentv1.Instance{Profile: "3g.40gb", Start: 0, Size: 4},
				ComputeInstances: []agentv1.ComputeInstance{{ID: 0, Profile: "3g.40gb", Start: 0, Size: 3}}}},
			Processes: []agentv1.Process{{PID: 42, UsedMemoryMiB: 100, GPUInstance: &two}}},
		{Index: 1, UUID: "GPU-1", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
	}, Warnings: []string{"GPU 1: running processes not listed"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := agentv1.ParseInventory(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, in)
	}
	if g := got.GPU(0); g == nil || g.ModelOrName() != "A100-80GB" || !reflect.DeepEqual(g.Slices(), map[string]int{"3g.40gb": 1}) || !reflect.DeepEqual(g.PIDs(), []int{42}) {
		t.Errorf("GPU 0 = %+v", g)
	}
	if g := got.GPU(1); g == nil || g.ModelOrName() != "NVIDIA A100-SXM4-80GB" || g.Slices() != nil {
		t.Errorf("GPU 1 = %+v", g)
	}
	if got.GPU(2) != nil || got.GPUs[0].Instances[0].String() != "3g.40gb@0:4" {
		t.Errorf("GPU 2 or String: %v %s", got.GPU(2), got.GPUs[0].Instances[0])
	}
}

func TestParseInventoryRejects(t *testing.T) {
	gpus := func(n int) string {
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`{"index":%d}`, i))
		}
		return `{"version":1,"gpus":[` + strings.Join(parts, ",") + `]}`
	}
	for _, tt := range []struct{ name, in, err string }{
		{"oversized", strings.Repeat(" ", agentv1.MaxInventoryBytes+1), "over the limit"},
		{"not JSON", `{`, "not valid JSON"},
		{"wrong type", `{"version":1,"gpus":[{"index":"0"}]}`, "not valid JSON"},
		{"version 2", `{"version":2,"gpus":[]}`, "version 2 is not 1"},
		{"no version", `{}`, "version 0 is not 1"},
		{"too many GPUs", gpus(agentv1.MaxGPUs + 1), "more than a node can hold"},
		{"repeated index", `{"version":1,"gpus":[{"index":0},{"index":0}]}`, "repeated GPU index 0"},
		{"negative index", `{"version":1,"gpus":[{"index":-1}]}`, "invalid or repeated GPU index -1"},
		{"index out of range", `{"version":1,"gpus":[{"index":64}]}`, "GPU index 64"},
		{"negative memory", `{"version":1,"gpus":[{"index":1,"memory_mib":-1}]}`, "GPU 1 is implausible"},
		{"instance before slot 0", `{"version":1,"gpus":[{"index":0,"instances":[{"profile":"7g.80gb","start":-1,"size":8}]}]}`, "impossible MIG instance"},
		{"instance past slot 7", `{"version":1,"gpus":[{"index":0,"instances":[{"profile":"1g.10gb","start":7,"size":2}]}]}`, "impossible MIG instance"},
		{"instance start overflows", `{"version":1,"gpus":[{"index":0,"instances":[{"profile":"1g.10gb","start":9223372036854775807,"size":1}]}]}`, "impossible MIG instance"},
		{"instance without profile", `{"version":1,"gpus":[{"index":0,"instances":[{"profile":"","start":0,"size":1}]}]}`, "impossible MIG instance"},
		{"instances over 8 slots", `{"version":1,"gpus":[{"index":0,"instances":[{"profile":"3g.40gb","start":0,"size":4},{"profile":"3g.40gb","start":4,"size":4},{"profile":"1g.10gb","start":7,"size":1}]}]}`, "over more memory slots"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if inv, err := agentv1.ParseInventory(tt.in); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseInventory = %+v, %v; want an error containing %q", inv, err, tt.err)
			}
		})
	}
	if _, err := agentv1.ParseInventory(gpus(agentv1.MaxGPUs)); err != nil {
		t.Errorf("%d GPUs: %v", agentv1.MaxGPUs, err)
	}
}
