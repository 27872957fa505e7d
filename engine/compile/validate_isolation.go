package compile

import (
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
)

// kueueMaxTaints is the most nodeTaints (and tolerations) a Kueue v0.17.0
// ResourceFlavor takes: maxItems 8 in its CRD
// (kueue.x-k8s.io_resourceflavors.yaml, spec.nodeTaints and
// spec.tolerations).
const kueueMaxTaints = 8

// isolation checks what the API server would refuse of the pools' taints,
// the tenants' RuntimeClasses and the models' autoscaling.
func (v *validator) isolation() {
	for _, p := range v.cfg.Pools {
		for _, t := range p.Taints {
			// The API server validates a taint's key as a qualified name and
			// its value as a label value (validateNodeTaints), and so the
			// tolerations gpuform writes from it.
			if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
				v.errorf(t.Range("key"), "Invalid taint", "Taint key %q: %s.", t.Key, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				v.errorf(t.Range("value"), "Invalid taint", "Taint value %q: %s.", t.Value, strings.Join(errs, "; "))
			}
		}
	}
	for _, t := range v.cfg.Tenants {
		for _, rc := range t.RuntimeClasses {
			// A pod's runtimeClassName is a DNS-1123 subdomain (the
			// RuntimeClass's name).
			v.name(t.Range("runtime_class"), "The RuntimeClass name", rc, validation.IsDNS1123Subdomain)
		}
	}
	for _, m := range v.cfg.Models {
		if m.Autoscaling != nil {
			v.autoscaling(m)
		}
	}
}

// autoscaling checks a model's autoscaling block against its model: KServe
// scales on an External metric only in Standard mode, between replicas.min
// and a larger replicas.max, from a Prometheus at an http(s) URL.
func (v *validator) autoscaling(m *config.Model) {
	a := m.Autoscaling
	switch {
	case a.HasAttr("gpu_utilization") == a.HasAttr("query"):
		v.errorf(a.DeclRange, "Autoscaling needs one metric", "Set either gpu_utilization (the target average GPU utilization in percent) or query (a Prometheus query) with target, not both and not neither.")
	case a.HasAttr("gpu_utilization") && (a.GPUUtilization < 1 || a.GPUUtilization > 100):
		v.errorf(a.Range("gpu_utilization"), "Invalid gpu_utilization", "gpu_utilization is a percentage of GPU time: 1 to 100; got %d.", a.GPUUtilization)
	case a.HasAttr("gpu_utilization") && a.HasAttr("target"):
		v.errorf(a.Range("target"), "Conflicting autoscaling target", "With gpu_utilization the target is the utilization itself; target goes with query.")
	case a.HasAttr("query") && !a.HasAttr("target"):
		v.errorf(a.Range("query"), "Autoscaling query without target", "A query needs target: the value at which replicas are added.")
	case a.Target <= 0:
		v.errorf(a.Range("target"), "Invalid target", "target must be greater than zero.")
	}
	if m.DeploymentMode != config.DeploymentStandard {
		v.errorf(m.Range("deployment_mode"), "Autoscaling needs Standard mode", "%s scales on a Prometheus metric through KEDA, which KServe does only for deployment_mode = %q; in %s mode Knative or ModelMesh scale it. Remove the autoscaling block or use Standard.", m.Address, config.DeploymentStandard, m.DeploymentMode)
	}
	if m.MaxReplicas <= m.MinReplicas {
		v.errorf(a.DeclRange, "Nothing to autoscale", "%s has replicas = { min = %d, max = %d }; autoscaling needs max greater than min.", m.Address, m.MinReplicas, m.MaxReplicas)
	}
	if a.Prometheus != "" {
		u, err := url.Parse(a.Prometheus)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf(a.Range("prometheus"), "Invalid Prometheus address", "prometheus is the address of the Prometheus server KEDA queries, like \"http://prometheus.monitoring:9090\"; got %s.", shown(&a.Meta, "prometheus", a.Prometheus))
		}
	}
}

// kueueTaints checks the pools' taints against the ResourceFlavor's limit.
func kueueTaints(cfg *config.Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, p := range cfg.Pools {
		if len(p.Taints) > kueueMaxTaints {
			diags = append(diags, errorAt(p.Taints[kueueMaxTaints].DeclRange, "Too many taints for Kueue", "Pool %s has %d taints; Kueue's ResourceFlavor, which carries them as nodeTaints, takes at most %d.", p.Name, len(p.Taints), kueueMaxTaints))
		}
	}
	return diags
}
