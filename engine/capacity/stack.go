package capacity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
)

// Which GPU stack offers a node's GPUs: the device plugin advertises them
// as nvidia.com resources in the node's status; NVIDIA's DRA driver
// publishes them in ResourceSlices (GPU Operator v26's DRA stack, its
// GPUCluster kind, runs the driver and no device plugin).

// advertisesNVIDIA reports whether node n advertises an nvidia.com
// resource (the device plugin's) with a non-zero capacity.
func advertisesNVIDIA(n *unstructured.Unstructured) bool {
	c, _, _ := unstructured.NestedMap(n.Object, "status", "capacity")
	for r, v := range c {
		if strings.HasPrefix(r, "nvidia.com/") && v != "0" && v != "" {
			return true
		}
	}
	return false
}

// StackOf says in a sentence which GPU stacks the cluster runs, for the
// plan: the GPU Operator's DRA stack (its GPUCluster), the nodes whose GPUs
// NVIDIA's DRA driver publishes and those where the device plugin
// advertises nvidia.com resources. Empty when cfg has no DRA pool and the
// GPU Operator runs no DRA stack: a device-plugin configuration on a
// device-plugin cluster says nothing new.
func StackOf(cfg *config.Config, nodes []*unstructured.Unstructured, dra DRAInventory) string {
	draPool := slices.ContainsFunc(cfg.Pools, (*config.Pool).DRA)
	driver, plugin := 0, 0
	for _, n := range nodes {
		if GPUs(dra.Nodes[n.GetName()]) > 0 {
			driver++
		}
		if advertisesNVIDIA(n) {
			plugin++
		}
	}
	if !draPool && len(dra.GPUClusters) == 0 {
		return ""
	}
	var parts []string
	switch {
	case len(dra.GPUClusters) > 0:
		parts = append(parts, fmt.Sprintf("the GPU Operator runs its DRA stack (GPUCluster %s)", strings.Join(dra.GPUClusters, ", ")))
	case !dra.Served:
		parts = append(parts, "the cluster does not serve ResourceSlices (resource.k8s.io/v1)")
	}
	parts = append(parts,
		fmt.Sprintf("NVIDIA's DRA driver publishes the GPUs of %s", Count(driver, "node")),
		fmt.Sprintf("the device plugin advertises nvidia.com resources on %s", Count(plugin, "node")))
	return strings.Join(parts, "; ")
}

// pluginWithoutResources refuses device-plugin pool p when none of its
// nodes advertises an nvidia.com resource while the DRA stack offers
// their GPUs (the GPU Operator runs a GPUCluster, or NVIDIA's DRA driver
// publishes them): the device plugin does not run there, so nothing the
// pool's quotas name could ever be scheduled. Nil when the pool can be
// served, or selects no node (its own error).
func pluginWithoutResources(p *config.Pool, nodes []*unstructured.Unstructured, dra DRAInventory) *hcl.Diagnostic {
	if p.DRA() {
		return nil
	}
	var members []string
	driver := false
	for _, n := range nodes {
		if !SelectsNode(p.NodeSelector, n) {
			continue
		}
		if advertisesNVIDIA(n) {
			return nil
		}
		members = append(members, n.GetName())
		driver = driver || GPUs(dra.Nodes[n.GetName()]) > 0
	}
	if len(members) == 0 || (len(dra.GPUClusters) == 0 && !driver) {
		return nil
	}
	return problem(p.Range("node_selector"), "Device-plugin pool on the DRA stack",
		"Pool %s is a device-plugin pool (mode = \"device_plugin\", the default), but its nodes (%s) advertise no nvidia.com resource: %s offers their GPUs, and the device plugin does not run there. Set mode = \"dra\" on the pool, or run the device plugin on those nodes (the GPU Operator's ClusterPolicy).",
		p.Name, strings.Join(members, ", "), draOffer(dra))
}

// draOffer names what offers GPUs through DRA, for messages.
func draOffer(dra DRAInventory) string {
	if len(dra.GPUClusters) > 0 {
		return "the GPU Operator's DRA stack (GPUCluster " + strings.Join(dra.GPUClusters, ", ") + ")"
	}
	return "NVIDIA's DRA driver (" + DRADriver + ")"
}
