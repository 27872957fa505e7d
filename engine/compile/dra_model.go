package compile

import (
	"fmt"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
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
// tenant's ResourceQuota counts per DeviceClass. It returns the template, in
// the tenant's namespace, named by draTemplate.
func (c *compiler) draModel(m *config.Model, w *Workload, modelSpec map[string]any) *engine.Object {
	name, profile, count := draTemplate(m)
	class := capacity.DeviceClass(c.stack, m.Pool.Name, profile)
	modelSpec["resources"] = map[string]any{"claims": []any{map[string]any{"name": draClaim}}}
	w.Predictor["resourceClaims"] = []any{map[string]any{"name": draClaim, "resourceClaimTemplateName": name}}

	kind := engine.KindClaimTemplate
	tmpl := newObject(kind, w.Namespace, name, c.stack, m.Address)
	tmpl.Object["spec"] = map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": []any{
		map[string]any{"name": draClaim, "exactly": map[string]any{
			"deviceClassName": class,
			"allocationMode":  "ExactCount",
			"count":           count,
		}},
	}}}}
	w.DependsOn = append(w.DependsOn, engine.KeyFor(kind, w.Namespace, name))
	deps := []engine.Key{engine.KeyFor(engine.KindNamespace, "", w.Namespace), engine.KeyFor(engine.KindDeviceClass, "", class)}
	return &engine.Object{Object: tmpl, DependsOn: deps, Sensitive: anySensitive(&m.Meta)}
}

// draTemplate is the name of the ResourceClaimTemplate of model m on a DRA
// pool, and the profile (capacity.WholeGPUClass for whole GPUs) and count
// of devices it asks for. The API server refuses any change to a
// template's spec (it is immutable), so the name holds everything the
// spec is made of besides the stack: <model>-<pool>-<profile>-<count>
// ("chat-h100-gpu-2", "vision-a100-1g-5gb-1"). A model whose GPUs change
// gets a new template, its InferenceService is pointed at it, and the old
// one is pruned; pods already running keep the claims made from it.
func draTemplate(m *config.Model) (name, profile string, count int64) {
	profile, count = capacity.WholeGPUClass, int64(m.GPUs)
	if m.Slice != "" {
		profile, count = m.Slice, 1
	}
	p := strings.NewReplacer(".", "-", "+", "-").Replace(strings.ToLower(profile))
	return fmt.Sprintf("%s-%s-%s-%d", m.Name, m.Pool.Name, p, count), profile, count
}
