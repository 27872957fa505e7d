package compile

import (
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/kinds"
)

// draClaim is the name of a DRA model's claim in its pod (spec.resourceClaims
// and the container's resources.claims) and of the one device request in its
// ResourceClaimTemplate.
const draClaim = "gpu"

// draModel makes model m, on a DRA pool, ask for its GPUs through a
// ResourceClaimTemplate instead of an extended resource: the predictor's pod
// claims devices from the template (KServe's v1beta1 predictor carries the
// pod's resourceClaims and the model container's resources.claims), and the
// template asks for the model's GPUs (count) or its one MIG slice of the
// pool's DeviceClass. Each pod of the model gets its own ResourceClaim, made
// from the template by Kubernetes' resource claim controller, which the
// tenant's ResourceQuota counts per DeviceClass. It returns the template,
// named after the model in its tenant's namespace.
func (c *compiler) draModel(m *config.Model, w *Workload, modelSpec map[string]any) *engine.Object {
	profile, count := capacity.WholeGPUClass, int64(m.GPUs)
	if m.Slice != "" {
		profile, count = m.Slice, 1
	}
	class := capacity.DeviceClass(c.stack, m.Pool.Name, profile)
	modelSpec["resources"] = map[string]any{"claims": []any{map[string]any{"name": draClaim}}}
	w.Predictor["resourceClaims"] = []any{map[string]any{"name": draClaim, "resourceClaimTemplateName": m.Name}}

	kind := engine.BuiltinKind(kinds.GroupResource, "ResourceClaimTemplate")
	tmpl := newObject(kind, w.Namespace, m.Name, c.stack, m.Address)
	tmpl.Object["spec"] = map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": []any{
		map[string]any{"name": draClaim, "exactly": map[string]any{
			"deviceClassName": class,
			"allocationMode":  "ExactCount",
			"count":           count,
		}},
	}}}}
	key := engine.KeyFor(kind, w.Namespace, m.Name)
	w.DependsOn = append(w.DependsOn, key)
	deps := []engine.Key{engine.KeyFor(engine.KindNamespace, "", w.Namespace), engine.KeyFor(engine.KindDeviceClass, "", class)}
	return &engine.Object{Object: tmpl, DependsOn: deps, Sensitive: anySensitive(&m.Meta)}
}
