package compile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/kinds"
)

// deviceClassesPolicy refuses, in tenant namespaces, a ResourceClaim or
// ResourceClaimTemplate that asks for devices of a DeviceClass other than
// the stack's DRA classes. A ResourceQuota limits only the classes it
// names, and every tenant's names each of the stack's (0 where it has no
// quota); NVIDIA's driver installs classes of its own (gpu.nvidia.com,
// mig.nvidia.com) that select every GPU, which no quota of the stack
// names. It also refuses adminAccess, which reaches devices allocated to
// other claims (other tenants' too) in a namespace labelled
// resource.kubernetes.io/admin-access, a label a tenant's labels may set.
// Every stack with tenants has it, DRA pools or none: a cluster may run
// NVIDIA's driver beside the device plugin, and a stack without DRA pools
// allows no class at all.
func (c *compiler) deviceClassesPolicy() {
	set := map[string]bool{}
	for _, p := range c.cfg.Pools {
		for class := range capacity.DeviceClasses(c.stack, p) {
			set[class] = true
		}
	}
	classes := slices.Sorted(maps.Keys(set))
	allowedText := strings.Join(classes, ", ")
	if len(classes) == 0 {
		allowedText = "none: the stack has no DRA pool"
	}
	quoted := make([]string, len(classes))
	for i, cl := range classes {
		quoted[i] = celString(cl)
	}
	claims := map[string]any{
		"apiGroups": []any{kinds.GroupResource}, "apiVersions": []any{"*"}, "operations": []any{"CREATE", "UPDATE"},
		"resources": []any{"resourceclaims", "resourceclaimtemplates"},
	}
	isResource := fmt.Sprintf("request.resource.group == %s", celString(kinds.GroupResource))
	// A claim's requests, or a template's claim's; none for the probe's
	// ConfigMap (the conditional reads no spec of it).
	requests := fmt.Sprintf("!(%[1]s) ? [] : request.resource.resource == 'resourceclaims' ? "+
		"(has(object.spec.devices) && has(object.spec.devices.requests) ? object.spec.devices.requests : []) : "+
		"(has(object.spec.spec) && has(object.spec.spec.devices) && has(object.spec.spec.devices.requests) ? object.spec.spec.devices.requests : [])", isResource)
	ok := celRule{
		"variables.requests.all(r, (!has(r.exactly) || (r.exactly.deviceClassName in variables.allowed && (!has(r.exactly.adminAccess) || !r.exactly.adminAccess))) && " +
			"(!has(r.firstAvailable) || r.firstAvailable.all(s, s.deviceClassName in variables.allowed)))",
		fmt.Sprintf("'device requests in namespace ' + namespaceObject.metadata.name + ' may name only the DeviceClasses of the DRA pools of the stack (%s), without adminAccess (gpuform ' + namespaceObject.metadata.annotations[%q] + ')'",
			allowedText, engine.AnnotAddress),
	}
	c.namespacePolicy("device-classes", []any{claims, configMapRule},
		[]any{
			map[string]any{"name": "allowed", "expression": "[" + strings.Join(quoted, ", ") + "]"},
			map[string]any{"name": "requests", "expression": requests},
		},
		ok,
	)
}
