package compile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// What NVIDIA's DRA driver for GPUs publishes (its names, with their
// source, are engine/capacity's): a DeviceClass selects by them.
const (
	draDriver       = capacity.DRADriver
	draTypeGPU      = capacity.DRATypeGPU
	draTypeMIG      = capacity.DRATypeMIG
	draAttrType     = capacity.DRAAttrType
	draAttrProduct  = capacity.DRAAttrProduct
	draAttrProfile  = capacity.DRAAttrProfile
	draSelectorForm = "device.driver == %s && device.attributes[%s].%s == %s && device.attributes[%s].%s in [%s]"
)

// deviceClasses are DRA pool p's DeviceClasses: one selecting its whole
// GPUs, or one per MIG profile of its layout, each by the attributes NVIDIA's
// driver publishes. Tenants' ResourceQuotas count devices of each
// (capacity.DeviceClassQuota).
func (c *compiler) deviceClasses(p *config.Pool) []*engine.Object {
	classes := capacity.DeviceClasses(c.stack, p)
	if classes == nil {
		return nil
	}
	g, _ := mig.Default().Lookup(p.GPU) // validation refused an unknown model
	products := draProductNames(g)
	var out []*engine.Object
	for _, name := range slices.Sorted(maps.Keys(classes)) {
		dc := newObject(engine.KindDeviceClass, "", name, c.stack, p.Address)
		dc.Object["spec"] = map[string]any{"selectors": []any{
			map[string]any{"cel": map[string]any{"expression": draSelector(products, classes[name])}},
		}}
		out = append(out, &engine.Object{Object: dc, Sensitive: anySensitive(&p.Meta)})
	}
	return out
}

// draSelector is the CEL expression that selects the devices of NVIDIA's
// driver of one of products: whole GPUs for profile capacity.WholeGPUClass,
// else MIG devices of that profile.
func draSelector(products []string, profile string) string {
	quoted := make([]string, len(products))
	for i, p := range products {
		quoted[i] = celString(p)
	}
	dom := celString(draDriver)
	typ := draTypeGPU
	if profile != capacity.WholeGPUClass {
		typ = draTypeMIG
	}
	expr := fmt.Sprintf(draSelectorForm, dom, dom, draAttrType, celString(typ), dom, draAttrProduct, strings.Join(quoted, ", "))
	if typ == draTypeMIG {
		expr += fmt.Sprintf(" && device.attributes[%s].%s == %s", dom, draAttrProfile, celString(profile))
	}
	return expr
}

// celString is s as a CEL string literal. Catalog names and MIG profiles
// hold no quote or backslash; they are escaped all the same.
func celString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// draProductNames are the names NVML reports for GPU model g, which NVIDIA's
// driver publishes as productName: the catalog's aliases with a space (GPU
// Feature Discovery's labels put hyphens for spaces).
func draProductNames(g *mig.GPU) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, a := range g.Aliases {
		if strings.Contains(a, " ") {
			out = append(out, a)
		}
	}
	return out
}

// draPools checks what a DRA pool cannot express: a DeviceClass selects by
// what the driver publishes of a device and not by node, so two DRA pools
// of one GPU model cannot be told apart (a quota on one would admit the
// other's devices); sharing by time-slicing or MPS is the device plugin's;
// what this release does not yet compile for DRA (Volcano's quotas) is
// refused rather than left without a limit; and under Kueue, whose
// configuration maps at most kueueMaxDeviceClasses DeviceClasses to quota
// resources, a stack with more classes is refused.
func (v *validator) draPools() {
	byModel := map[string]*config.Pool{}
	classes := 0
	for _, p := range v.cfg.Pools {
		if !p.DRA() {
			continue
		}
		if s := p.Shared(); s != nil {
			v.errorf(s.DeclRange, "Sharing on a DRA pool", "Pool %s has mode = \"dra\": NVIDIA's DRA driver does not share a GPU by time-slicing or MPS the way the device plugin does; remove the block or set mode = \"device_plugin\".", p.Name)
		}
		if sched := v.cfg.Settings.Scheduler; sched == config.SchedulerVolcano {
			v.errorf(p.Range("mode"), "DRA pool under a queueing scheduler", "Pool %s has mode = \"dra\", but gpuform does not yet write %s quotas for DeviceClasses; set scheduler = \"none\" or \"kueue\", or mode = \"device_plugin\".", p.Name, sched)
		}
		for class := range capacity.DeviceClasses(v.cfg.Settings.Stack, p) {
			v.name(p.Range("mode"), "The DeviceClass name", class, validation.IsDNS1123Subdomain)
			if classes++; classes == kueueMaxDeviceClasses+1 && v.cfg.Settings.Scheduler == config.SchedulerKueue {
				v.errorf(p.Range("mode"), "Too many DeviceClasses for Kueue", "The stack's DRA pools have more than %d DeviceClasses (pool %s's take it past that). Kueue counts a workload's devices only of a DeviceClass its configuration maps to a resource (resources.deviceClassMappings), at most %d mappings, and gpuform maps each class to its own resource, so that a quota on one pool is not spent on another's devices. Use fewer MIG profiles on DRA pools, or mode = \"device_plugin\" on some.", kueueMaxDeviceClasses, p.Name, kueueMaxDeviceClasses)
			}
		}
		g := v.gpus[p]
		if g == nil {
			continue // an unknown model has its error at gpu
		}
		if len(draProductNames(g)) == 0 {
			v.errorf(p.Range("mode"), "No DRA product name", "Pool %s has %s GPUs, for which the catalog holds no name NVML reports; NVIDIA's DRA driver publishes that name (productName), which the pool's DeviceClass selects by. Set mode = \"device_plugin\".", p.Name, g.Key)
			continue
		}
		if other, ok := byModel[g.Key]; ok {
			v.errorf(p.Range("mode"), "DRA pools not told apart", "Pools %s and %s both have mode = \"dra\" and %s GPUs: a DeviceClass selects devices by what NVIDIA's DRA driver publishes of them (product, MIG profile), not by node, so a quota on one pool would admit the other's devices. Merge the pools or set mode = \"device_plugin\" on one.", other.Name, p.Name, g.Key)
			continue
		}
		byModel[g.Key] = p
	}
	for _, m := range v.cfg.Models {
		if m.Pool != nil && m.Pool.DRA() {
			name, _, _ := draTemplate(m)
			v.name(m.DeclRange, "The ResourceClaimTemplate name", name, validation.IsDNS1123Subdomain)
		}
	}
}
