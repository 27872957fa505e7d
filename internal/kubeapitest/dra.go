package kubeapitest

import (
	"context"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/engine/capacity"
)

// DRADriver is NVIDIA's DRA driver for GPUs as its ResourceSlices name it.
const DRADriver = capacity.DRADriver

// DRANode is a simulated node of NVIDIA's DRA driver: GPUs whole GPUs of
// Product (the product name NVML reports), or, when MIG
// lists profiles, each GPU in MIG mode with one MIG device per profile
// listed (and no whole GPU, as the driver publishes a GPU in MIG mode).
type DRANode struct {
	Node        string
	Product     string
	GPUs        int
	MemoryBytes int64
	MIG         []string
}

// DRASliceName is the name of the ResourceSlice PublishDRASlices
// publishes for node.
func DRASliceName(node string) string {
	return node + "-" + strings.ReplaceAll(DRADriver, ".", "-")
}

// PublishDRASlices publishes, with strict field validation, one
// ResourceSlice per node as NVIDIA's DRA driver (k8s-dra-driver-gpu
// v25.12.0, cmd/gpu-kubelet-plugin: deviceinfo.go, partitions.go) does for
// statically partitioned GPUs: driver gpu.nvidia.com, one pool per node
// named after it, devices gpu-<minor> (attributes type "gpu", uuid,
// productName, brand, architecture, cudaComputeCapability, driverVersion,
// cudaDriverVersion, resource.kubernetes.io/pciBusID; capacity memory)
// and gpu-<minor>-mig-<profile>-<index> (the driver ends the name in the
// profile ID and placement start instead; type "mig", profile, parentUUID
// and the parent's product attributes). The memory and version values are
// plausible stand-ins: gpuform selects by type, productName and profile.
func PublishDRASlices(ctx context.Context, cfg *rest.Config, nodes ...DRANode) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		slice := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: DRASliceName(n.Node)},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   DRADriver,
				NodeName: &n.Node,
				Pool:     resourcev1.ResourcePool{Name: n.Node, Generation: 1, ResourceSliceCount: 1},
				Devices:  draDevices(n),
			},
		}
		_, err := cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{FieldValidation: "Strict"})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("publish the ResourceSlice of node %s: %w", n.Node, err)
		}
	}
	return nil
}

// draDevices are the devices of node n as the driver names and describes
// them (capacity.DRAGPU), with the attributes gpuform does not read.
func draDevices(n DRANode) []resourcev1.Device {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	ver := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: &s} }
	var out []resourcev1.Device
	for minor := range n.GPUs {
		for _, d := range capacity.DRAGPU(n.Node, n.Product, minor, n.MIG) {
			attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				capacity.DRAAttrType:              str(d.Type),
				capacity.DRAAttrProduct:           str(d.Product),
				"brand":                           str("Nvidia"),
				"architecture":                    str("Hopper"),
				"cudaComputeCapability":           ver("9.0.0"),
				"driverVersion":                   ver("570.148.8"),
				"cudaDriverVersion":               ver("12.8.0"),
				"resource.kubernetes.io/pciBusID": str(fmt.Sprintf("0000:%02x:00.0", minor+1)),
			}
			dev := resourcev1.Device{Name: d.Name, Attributes: attrs}
			if d.Type == capacity.DRATypeMIG {
				attrs[capacity.DRAAttrProfile] = str(d.Profile)
				attrs[capacity.DRAAttrParentUUID] = str(d.GPU)
				attrs[capacity.DRAAttrUUID] = str("MIG-" + d.GPU + "-" + d.Name)
			} else {
				attrs[capacity.DRAAttrUUID] = str(d.GPU)
				dev.Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: *resource.NewQuantity(n.MemoryBytes, resource.BinarySI)}}
			}
			out = append(out, dev)
		}
	}
	return out
}
