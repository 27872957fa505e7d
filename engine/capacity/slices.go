package capacity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// What NVIDIA's DRA driver for GPUs publishes in its ResourceSlices, read
// from github.com/NVIDIA/k8s-dra-driver-gpu at tag v25.12.0 (commit
// 0882da8720c28763137e0987778ec476ec4cf8df, Apache License 2.0):
// cmd/gpu-kubelet-plugin/main.go (DriverName), partitions.go
// (PartDevAttributes: a whole GPU's attributes), deviceinfo.go
// (MigDeviceInfo.GetDevice: a MIG device's) and types.go (GpuDeviceType).
// A whole GPU has type "gpu"; a MIG device type "mig", its profile
// ("1g.5gb"), its parent's UUID and the parent's productName, the product
// name NVML reports (the catalog's NVML names); both carry driverVersion,
// a version attribute (partitions.go). Unqualified attribute
// names are in the driver's domain, so CEL reads them as
// device.attributes['gpu.nvidia.com']. The DeviceClasses gpuform writes
// (engine/compile), the simulated cluster's slices (providers/sim) and the
// test harness's (internal/kubeapitest) use these names.
const (
	DRADriver         = "gpu.nvidia.com"
	DRATypeGPU        = "gpu"
	DRATypeMIG        = "mig"
	DRAAttrType       = "type"
	DRAAttrProduct    = "productName"
	DRAAttrProfile    = "profile"
	DRAAttrUUID       = "uuid"
	DRAAttrParentUUID = "parentUUID"
	// DRAAttrDriverVersion is the driver's version, a version attribute
	// ({"version": "580.65.6"}: semver, so without leading zeros).
	DRAAttrDriverVersion = "driverVersion"
)

// DRADevice is one device NVIDIA's DRA driver publishes in a node's
// ResourceSlices: a whole GPU or a MIG device.
type DRADevice struct {
	// Node is the node the slice is for (spec.nodeName).
	Node string `json:"node"`
	// Name is the device's name in its slice ("gpu-0", "gpu-0-mig-9-4-1").
	Name string `json:"name"`
	// Type is DRATypeGPU or DRATypeMIG (or what else the driver publishes).
	Type string `json:"type"`
	// Profile is a MIG device's profile ("1g.10gb"); empty for a GPU.
	Profile string `json:"profile,omitempty"`
	// Product is the product name NVML reports (of the parent GPU for a
	// MIG device).
	Product string `json:"product"`
	// GPU identifies the physical GPU: its UUID, a MIG device's parent's,
	// else the device's name.
	GPU string `json:"gpu"`
	// Partition is set on a device that consumes counters its GPU shares
	// with other devices (consumesCounters): the driver's dynamic MIG,
	// which publishes every partition a GPU could hold and makes the MIG
	// device when a claim gets it.
	Partition bool `json:"partition,omitempty"`
	// Driver is the NVIDIA driver's version the device's driverVersion
	// attribute gives; empty when it has none.
	Driver string `json:"driver,omitempty"`
}

// DRAInventory is what NVIDIA's DRA driver publishes, by node.
type DRAInventory struct {
	// Served says the cluster serves ResourceSlices (resource.k8s.io/v1)
	// and they were read; false leaves Nodes empty.
	Served bool
	// Nodes are the devices of each node, in the slices' order.
	Nodes map[string][]DRADevice
	// GPUClusters are the names of the GPU Operator's GPUCluster objects:
	// one says the operator runs its DRA stack, under which nodes no
	// longer advertise nvidia.com resources. Nil when none was read.
	GPUClusters []string
	// Kueue is what plan read of Kueue's configuration (KueueConfigOf):
	// whether Kueue counts the DRA pools' devices.
	Kueue KueueConfig
	// Volcano is what plan read of the Volcano scheduler's configuration
	// (VolcanoConfigOf): whether it enforces hierarchical Queues.
	Volcano VolcanoConfig
}

// IsDRADriverSlice reports whether u is a ResourceSlice of NVIDIA's DRA
// driver for GPUs; slices of other drivers are not read.
func IsDRADriverSlice(u *unstructured.Unstructured) bool {
	d, _, _ := unstructured.NestedString(u.Object, "spec", "driver")
	return d == DRADriver
}

// DRADevicesOf reads the devices of NVIDIA's DRA driver from ResourceSlices
// (served says the cluster serves the kind): per node, only the slices of
// each resource pool's newest generation count, as the scheduler reads
// them; slices of other drivers and without a node are left out.
func DRADevicesOf(items []*unstructured.Unstructured, served bool) DRAInventory {
	out := DRAInventory{Served: served, Nodes: map[string][]DRADevice{}}
	newest := map[string]int64{}
	for _, u := range items {
		if !IsDRADriverSlice(u) {
			continue
		}
		pool, _, _ := unstructured.NestedString(u.Object, "spec", "pool", "name")
		gen, _, _ := unstructured.NestedInt64(u.Object, "spec", "pool", "generation")
		if g, ok := newest[pool]; !ok || gen > g {
			newest[pool] = gen
		}
	}
	for _, u := range items {
		if !IsDRADriverSlice(u) {
			continue
		}
		node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
		pool, _, _ := unstructured.NestedString(u.Object, "spec", "pool", "name")
		gen, _, _ := unstructured.NestedInt64(u.Object, "spec", "pool", "generation")
		if node == "" || gen != newest[pool] {
			continue
		}
		devs, _, _ := unstructured.NestedSlice(u.Object, "spec", "devices")
		for _, d := range devs {
			dm, ok := d.(map[string]any)
			if !ok {
				continue
			}
			out.Nodes[node] = append(out.Nodes[node], draDevice(node, dm))
		}
	}
	return out
}

// draDevice reads one device of a slice of node.
func draDevice(node string, d map[string]any) DRADevice {
	name, _ := d["name"].(string)
	attrs, _ := d["attributes"].(map[string]any)
	attrOf := func(key, typ string) string {
		for _, k := range []string{key, DRADriver + "/" + key} {
			if a, ok := attrs[k].(map[string]any); ok {
				if s, ok := a[typ].(string); ok {
					return s
				}
			}
		}
		return ""
	}
	attr := func(key string) string { return attrOf(key, "string") }
	dev := DRADevice{Node: node, Name: name, Type: attr(DRAAttrType), Profile: attr(DRAAttrProfile), Product: attr(DRAAttrProduct), Driver: attrOf(DRAAttrDriverVersion, "version")}
	dev.GPU = attr(DRAAttrUUID)
	if dev.Type == DRATypeMIG {
		dev.GPU = attr(DRAAttrParentUUID)
	}
	if dev.GPU == "" {
		dev.GPU = name
	}
	counters, _ := d["consumesCounters"].([]any)
	dev.Partition = len(counters) > 0
	return dev
}

// GPUs is the number of physical GPUs among devs: whole GPUs and the
// distinct parents of MIG devices.
func GPUs(devs []DRADevice) int {
	seen := map[string]bool{}
	for _, d := range devs {
		if d.Type == DRATypeGPU || d.Type == DRATypeMIG {
			seen[d.GPU] = true
		}
	}
	return len(seen)
}

// Products are the distinct product names among devs, sorted.
func Products(devs []DRADevice) []string {
	return distinct(devs, func(d DRADevice) string { return d.Product })
}

// DriverVersions are the distinct driver versions among devs (their
// driverVersion attributes), sorted.
func DriverVersions(devs []DRADevice) []string {
	return distinct(devs, func(d DRADevice) string { return d.Driver })
}

// distinct is the sorted set of the non-empty values of field among devs.
func distinct(devs []DRADevice, field func(DRADevice) string) []string {
	var out []string
	for _, d := range devs {
		if v := field(d); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// String renders a device as the plan names it: node/name (profile).
func (d DRADevice) String() string {
	s := d.Node + "/" + d.Name
	if d.Profile != "" {
		s += " (" + strings.TrimSpace(d.Profile) + ")"
	}
	return s
}

// checkDRAMembers checks DRA pool p's nodes against what NVIDIA's DRA
// driver publishes for them and returns their GPUs by node and the devices
// they offer now by the pool's DeviceClass quotas. A cluster that does not
// serve ResourceSlices, or a pool none of whose nodes publishes a device,
// is an error that says what to check (nil maps: the pool has no rows); a
// node without devices a warning; devices of another product an error.
func checkDRAMembers(stack string, p *config.Pool, members []NodeInventory, dra DRAInventory, cat *mig.Catalog) (gpusPerNode, before map[string]int, diags hcl.Diagnostics) {
	if !dra.Served {
		return nil, nil, hcl.Diagnostics{problem(p.Range("mode"), "DRA pool on a cluster without DRA",
			"Pool %s has mode = \"dra\", but the cluster does not serve ResourceSlices at resource.k8s.io/v1 (Kubernetes v1.34 or later), where NVIDIA's DRA driver publishes the GPUs. Upgrade the cluster, or set mode = \"device_plugin\".", p.Name)}
	}
	want := cat.Key(p.GPU)
	gpusPerNode, before = map[string]int{}, map[string]int{}
	var bare, wrong, offDriver []string
	for _, m := range members {
		devs := dra.Nodes[m.Node]
		if GPUs(devs) == 0 {
			bare = append(bare, m.Node)
			continue
		}
		for _, v := range DriverVersions(devs) {
			if ok, err := config.SatisfiesVersion(p.DriverVersion, v); p.DriverVersion != "" && err == nil && !ok {
				offDriver = append(offDriver, fmt.Sprintf("%s (%s)", m.Node, v))
			}
		}
		for _, prod := range Products(devs) {
			if cat.Key(prod) != want {
				wrong = append(wrong, fmt.Sprintf("%s (%s)", m.Node, prod))
			}
		}
		gpusPerNode[m.Node] = GPUs(devs)
		for _, d := range devs {
			switch d.Type {
			case DRATypeGPU:
				before[DeviceClassQuota(DeviceClass(stack, p.Name, WholeGPUClass))]++
			case DRATypeMIG:
				before[DeviceClassQuota(DeviceClass(stack, p.Name, d.Profile))]++
			}
		}
	}
	if len(bare) == len(members) {
		return nil, nil, hcl.Diagnostics{problem(p.Range("mode"), "DRA pool without devices",
			"Pool %s has mode = \"dra\", but none of the nodes it selects (%s) publishes a GPU in a ResourceSlice of NVIDIA's DRA driver (%s). Check that the driver's kubelet plugin runs on them (the GPU Operator's DRA stack, or NVIDIA's k8s-dra-driver-gpu) and that `kubectl get resourceslices` lists them, or set mode = \"device_plugin\".", p.Name, strings.Join(bare, ", "), DRADriver)}
	}
	if len(bare) > 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Nodes without DRA devices", Subject: p.Range("mode").Ptr(),
			Detail: fmt.Sprintf("Pool %s has mode = \"dra\", but its nodes %s publish no GPU in a ResourceSlice of NVIDIA's DRA driver (%s): their GPUs are not counted. Check that the driver's kubelet plugin runs on them.", p.Name, strings.Join(bare, ", "), DRADriver)})
	}
	if len(wrong) > 0 {
		diags = append(diags, problem(p.Range("gpu"), "Nodes with other GPUs", "Pool %s is for %s GPUs, but NVIDIA's DRA driver publishes on its nodes %s. Narrow node_selector, or set gpu to what the nodes have.", p.Name, want, strings.Join(wrong, ", ")))
	}
	if len(offDriver) > 0 {
		diags = append(diags, driverProblem(p, offDriver))
	}
	return gpusPerNode, before, diags
}

// DRASlice is a ResourceSlice as NVIDIA's DRA driver publishes it for node
// (one pool named after the node, generation 1), holding devs with the
// attributes gpuform reads of them (type, productName, uuid, a MIG
// device's profile and parentUUID; GPU is the UUID of a whole GPU and the
// parent's of a MIG device): what the simulated cluster publishes, and the
// inverse of DRADevicesOf.
func DRASlice(apiVersion, node string, devs []DRADevice) *unstructured.Unstructured {
	str := func(s string) map[string]any { return map[string]any{"string": s} }
	items := make([]any, 0, len(devs))
	for _, d := range devs {
		attrs := map[string]any{DRAAttrType: str(d.Type), DRAAttrProduct: str(d.Product)}
		if d.Type == DRATypeMIG {
			attrs[DRAAttrProfile] = str(d.Profile)
			attrs[DRAAttrParentUUID] = str(d.GPU)
			attrs[DRAAttrUUID] = str("MIG-" + d.GPU + "-" + d.Name)
		} else {
			attrs[DRAAttrUUID] = str(d.GPU)
		}
		if d.Driver != "" {
			attrs[DRAAttrDriverVersion] = map[string]any{"version": d.Driver}
		}
		items = append(items, map[string]any{"name": d.Name, "attributes": attrs})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": "ResourceSlice",
		"metadata": map[string]any{"name": node + "-" + strings.ReplaceAll(DRADriver, ".", "-")},
		"spec": map[string]any{
			"driver": DRADriver, "nodeName": node,
			"pool":    map[string]any{"name": node, "generation": int64(1), "resourceSliceCount": int64(1)},
			"devices": items,
		},
	}}
}

// DRAGPU is what NVIDIA's DRA driver publishes for GPU minor of node, a
// product GPU: the whole GPU (gpu-<minor>), or in MIG mode one MIG device
// per profile listed (gpu-<minor>-mig-<profile>-<i>) and no whole GPU.
func DRAGPU(node, product string, minor int, profiles []string) []DRADevice {
	uuid := fmt.Sprintf("GPU-%s-%04d", node, minor)
	if len(profiles) == 0 {
		return []DRADevice{{Node: node, Name: fmt.Sprintf("gpu-%d", minor), Type: DRATypeGPU, Product: product, GPU: uuid}}
	}
	out := make([]DRADevice, len(profiles))
	for i, prof := range profiles {
		out[i] = DRADevice{Node: node, Name: fmt.Sprintf("gpu-%d-mig-%s-%d", minor, strings.ReplaceAll(prof, ".", ""), i),
			Type: DRATypeMIG, Profile: prof, Product: product, GPU: uuid}
	}
	return out
}
