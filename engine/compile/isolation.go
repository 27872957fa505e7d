package compile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// taints are a pool's taints as Node and Kueue ResourceFlavor write them
// (spec.taints, spec.nodeTaints).
func taints(p *config.Pool) []any {
	out := make([]any, 0, len(p.Taints))
	for _, t := range p.Taints {
		m := map[string]any{"key": t.Key, "effect": t.Effect}
		if t.Value != "" {
			m["value"] = t.Value
		}
		out = append(out, m)
	}
	return out
}

// tolerations are the tolerations of a pool's taints: what a pod needs to
// be scheduled on the pool's nodes (operator Equal on key, value and
// effect: a taint with another value is not tolerated).
func tolerations(p *config.Pool) []any {
	out := make([]any, 0, len(p.Taints))
	for _, t := range p.Taints {
		m := map[string]any{"key": t.Key, "operator": "Equal", "effect": t.Effect}
		if t.Value != "" {
			m["value"] = t.Value
		}
		out = append(out, m)
	}
	return out
}

// isolateModel writes into a model's predictor what its pool and tenant
// ask of its pods: the tolerations of the pool's taints, the tenant's
// first RuntimeClass, and the autoscaling block.
func isolateModel(m *config.Model, w *Workload) {
	if len(m.Pool.Taints) > 0 {
		w.Predictor["tolerations"] = tolerations(m.Pool)
	}
	if rc := m.Tenant.RuntimeClasses; len(rc) > 0 {
		w.Predictor["runtimeClassName"] = rc[0]
	}
	if a := m.Autoscaling; a != nil {
		autoscale(m, a, w)
	}
}

// GPUUtilizationQuery is the Prometheus query of a model's average GPU
// utilization in percent: DCGM exporter's DCGM_FI_DEV_GPU_UTIL of the
// model's predictor pods (KServe names them <model>-predictor-...).
func GPUUtilizationQuery(namespace, model string) string {
	return fmt.Sprintf(`avg(DCGM_FI_DEV_GPU_UTIL{namespace=%q,pod=~%q})`, namespace, model+"-predictor-.*")
}

// autoscale writes KServe's autoscaling of a model (v0.15 and later,
// spec.predictor.autoScaling): one External metric from Prometheus with
// its target value, and the cool-down as the scale-down stabilization
// window. KServe serves External metrics through KEDA, chosen by the
// serving.kserve.io/autoscalerClass annotation: KServe writes the KEDA
// ScaledObject itself.
func autoscale(m *config.Model, a *config.Autoscaling, w *Workload) {
	query := a.Query
	if query == "" {
		query = GPUUtilizationQuery(w.Namespace, m.Name)
	}
	metric := map[string]any{"backend": "prometheus", "query": query}
	if a.Prometheus != "" {
		metric["serverAddress"] = a.Prometheus
	}
	w.Annotations["serving.kserve.io/autoscalerClass"] = "keda"
	w.Predictor["autoScaling"] = map[string]any{
		"metrics": []any{map[string]any{
			"type": "External",
			"external": map[string]any{
				"metric": metric,
				"target": map[string]any{"type": "Value", "value": strconv.FormatFloat(a.Target, 'f', -1, 64)},
			},
		}},
		"behavior": map[string]any{"scaleDown": map[string]any{"stabilizationWindowSeconds": int64(a.Cooldown)}},
	}
}

// runtimeClassAnnotation records on a tenant's Namespace the
// RuntimeClasses its pods may use, which the stack's runtime-class policy
// reads; it reports whether the tenant has any.
func runtimeClassAnnotation(t *config.Tenant, annotations map[string]any) bool {
	if len(t.RuntimeClasses) == 0 {
		return false
	}
	names := append([]string(nil), t.RuntimeClasses...)
	sort.Strings(names)
	annotations[engine.AnnotRuntimeClasses] = strings.Join(names, ",")
	return true
}

// runtimeClassPolicy adds the stack's ValidatingAdmissionPolicy and binding
// that refuse pods without an allowed runtimeClassName in the namespaces of
// tenants with a runtime_class. Like the priorities policy, one policy
// serves every tenant and reads the allowed classes from the Namespace's
// gpuform.dev/runtime-classes annotation, which tenants cannot edit.
func (c *compiler) runtimeClassPolicy() {
	annot := fmt.Sprintf("namespaceObject.metadata.annotations[%q]", engine.AnnotRuntimeClasses)
	c.namespacePolicy("runtime-classes", []any{podRule, configMapRule}, nil, celRule{
		// Pods of namespaces without the annotation (tenants without
		// runtime_class) pass.
		fmt.Sprintf("!(%s) || !has(namespaceObject.metadata.annotations) || !(%q in namespaceObject.metadata.annotations) || (has(object.spec.runtimeClassName) && object.spec.runtimeClassName in %s.split(','))", isPod, engine.AnnotRuntimeClasses, annot),
		fmt.Sprintf("'pods in namespace ' + namespaceObject.metadata.name + ' must set runtimeClassName to ' + %s.replace(',', ' or ') + ' (gpuform ' + namespaceObject.metadata.annotations[%q] + ')'",
			annot, engine.AnnotAddress),
	})
}
