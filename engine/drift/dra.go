package drift

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// draHardware checks DRA pool p's nodes against what NVIDIA's DRA driver
// publishes for them in ResourceSlices: a node that publishes no GPU (its
// devices vanished, or the driver does not run there), fewer or more GPUs
// than most of the pool's nodes, GPUs of another model, a driver outside
// driver_version (the driverVersion its devices publish; the node's labels
// where they publish none), and, once the node's layout is
// in place, MIG devices that vanished or appeared against the layout's.
// Nothing when the cluster serves no ResourceSlices: plan refuses the pool.
func draHardware(cfg *config.Config, p *config.Pool, members []*unstructured.Unstructured, dra capacity.DRAInventory, cat *mig.Catalog) []Item {
	if !dra.Served {
		return nil
	}
	counts := map[int]int{}
	for _, n := range members {
		if g := capacity.GPUs(dra.Nodes[n.GetName()]); g > 0 {
			counts[g]++
		}
	}
	usual := mostCommon(counts)
	want := cat.Key(p.GPU)
	var out []Item
	for _, n := range members {
		devs := dra.Nodes[n.GetName()]
		gpus := capacity.GPUs(devs)
		var details []string
		switch {
		case gpus == 0:
			details = append(details, fmt.Sprintf("publishes no GPU in a ResourceSlice of NVIDIA's DRA driver (%s): its devices vanished, or the driver's kubelet plugin does not run there", capacity.DRADriver))
		case usual > 0 && gpus != usual && counts[usual] > 1:
			details = append(details, fmt.Sprintf("NVIDIA's DRA driver publishes %s where the pool's other nodes have %d: a GPU may have failed or fallen off the bus", capacity.Count(gpus, "GPU"), usual))
		}
		for _, prod := range capacity.Products(devs) {
			if cat.Key(prod) != want {
				details = append(details, fmt.Sprintf("NVIDIA's DRA driver publishes %s GPUs; pool %s wants %s", prod, p.Name, want))
			}
		}
		drivers := capacity.DriverVersions(devs)
		if len(drivers) == 0 {
			drivers = []string{capacity.InventoryOf(n, cat).Driver}
		}
		for _, v := range drivers {
			details = append(details, driverDetail(p, v)...)
		}
		if p.MIGLayout != nil && gpus > 0 && layoutDone(cfg, p, n) {
			details = append(details, draMIGDevices(p, devs, gpus)...)
		}
		out = append(out, hardwareItem(p, n, details)...)
	}
	return out
}

// draMIGDevices compares the MIG devices NVIDIA's DRA driver publishes on a
// node of gpus GPUs with what pool p's layout makes there: the devices
// that vanished and those that appeared, by profile.
func draMIGDevices(p *config.Pool, devs []capacity.DRADevice, gpus int) []string {
	have := map[string]int{}
	for _, d := range devs {
		if d.Type == capacity.DRATypeMIG {
			have[d.Profile]++
		}
	}
	want := layoutInstances(p.MIGLayout, gpus)
	if equalCounts(have, want) {
		return nil
	}
	vanished, appeared := map[string]int{}, map[string]int{}
	profiles := maps.Clone(have)
	maps.Copy(profiles, want)
	for prof := range profiles {
		switch d := want[prof] - have[prof]; {
		case d > 0:
			vanished[prof] = d
		case d < 0:
			appeared[prof] = -d
		}
	}
	var parts []string
	if len(vanished) > 0 {
		parts = append(parts, "vanished "+countsString(vanished))
	}
	if len(appeared) > 0 {
		parts = append(parts, "appeared "+countsString(appeared))
	}
	return []string{fmt.Sprintf("NVIDIA's DRA driver publishes MIG devices %s where layout %s on %s makes %s: %s", countsString(have), p.MIGLayout.Name, capacity.Count(gpus, "GPU"), countsString(want), strings.Join(parts, ", "))}
}
