// Package alerting holds gpuform's built-in GPU alerts, as PromQL over the
// DCGM exporter's and kube-state-metrics' series, and the checks of an
// alerting rule (PromQL with Prometheus's own parser, durations, label
// names). docs/observability.md describes each alert.
package alerting

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// Names of the built-in alerts: the values an alerts block's disabled
// list takes.
const (
	UtilizationLow  = "utilization_low"
	MemoryHigh      = "memory_high"
	TemperatureHigh = "temperature_high"
	XIDErrors       = "xid_errors"
	QuotaSaturation = "quota_saturation"
	SlicesPending   = "slices_pending"
)

// PoolAlerts are the built-in alerts of a pool; TenantAlerts those of a
// tenant.
var (
	PoolAlerts   = []string{UtilizationLow, MemoryHigh, TemperatureHigh, XIDErrors}
	TenantAlerts = []string{UtilizationLow, MemoryHigh, TemperatureHigh, XIDErrors, QuotaSaturation, SlicesPending}
)

// Severities of the built-in alerts (label severity).
const (
	SeverityInfo     = "info"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Rule is one alerting rule of a PrometheusRule's group.
type Rule struct {
	// Alert is the alert's name, Expr its PromQL, For how long it must
	// hold before it fires (a Prometheus duration).
	Alert string
	Expr  string
	For   string
	// Labels are added to the alert (severity among them); Annotations
	// describe it (summary, description).
	Labels      map[string]string
	Annotations map[string]string
}

// Thresholds are the settings of an alerts block: percentages, degrees C
// and Prometheus durations (a pool's quota and pending settings are
// empty). Disabled names alerts left out.
type Thresholds struct {
	UtilizationBelow float64
	UtilizationFor   string
	MemoryAbove      float64
	MemoryFor        string
	TemperatureAbove float64
	TemperatureFor   string
	QuotaAbove       float64
	QuotaFor         string
	PendingFor       string
	Disabled         []string
	Labels           map[string]string
}

// Scope is what a set of built-in alerts watches: the GPUs of a pool's
// nodes, or those a tenant's pods hold and the tenant's quota and pods.
type Scope struct {
	// Stack is the stack's name (label gpuform_stack).
	Stack string
	// Pool is the pool's name, for a pool's alerts.
	Pool string
	// Tenant and Namespace name a tenant, for a tenant's alerts;
	// ResourceQuota is the name of its ResourceQuota.
	Tenant, Namespace, ResourceQuota string
}

// PoolLabel is the node label that puts a node in a pool, and
// PoolNodeMetricLabel the label kube-state-metrics' kube_node_labels gives
// it (when its --metric-labels-allowlist names it).
const (
	PoolLabel           = "gpuform.dev/pool"
	PoolNodeMetricLabel = "label_gpuform_dev_pool"
)

// Rules returns the scope's built-in alerts with thresholds t, in the order
// of PoolAlerts or TenantAlerts, less those t disables.
func Rules(s Scope, t Thresholds) []Rule {
	names := PoolAlerts
	if s.Tenant != "" {
		names = TenantAlerts
	}
	off := map[string]bool{}
	for _, d := range t.Disabled {
		off[d] = true
	}
	var out []Rule
	for _, n := range names {
		if off[n] {
			continue
		}
		r := s.rule(n, t)
		r.Labels["gpuform_stack"] = Literal(s.Stack)
		if s.Tenant != "" {
			r.Labels["gpuform_tenant"] = Literal(s.Tenant)
		} else {
			r.Labels["gpuform_pool"] = Literal(s.Pool)
		}
		maps.Copy(r.Labels, t.Labels)
		out = append(out, r)
	}
	return out
}

// rule is the built-in alert name in scope s.
func (s Scope) rule(name string, t Thresholds) Rule {
	switch name {
	case UtilizationLow:
		below := " < " + num(t.UtilizationBelow)
		return Rule{Alert: "GPUUtilizationLow", For: t.UtilizationFor,
			Expr:        s.gpus("DCGM_FI_DEV_GPU_UTIL") + below + " or " + s.migInstances("100 * ", EngineActive) + below,
			Labels:      map[string]string{"severity": SeverityInfo},
			Annotations: about("GPU {{ $labels.gpu }}"+migInstance+" on {{ $labels.Hostname }} is less than "+num(t.UtilizationBelow)+"% busy", "Its utilization has stayed below "+num(t.UtilizationBelow)+"% for "+t.UtilizationFor+" (now {{ $value }}%): a GPU held but barely used.")}
	case MemoryHigh:
		used, free := s.gpus("DCGM_FI_DEV_FB_USED"), s.gpus("DCGM_FI_DEV_FB_FREE")
		if s.Pool != "" {
			used, free = "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"
		}
		expr := "100 * " + used + " / (" + used + " + " + free + ") > " + num(t.MemoryAbove)
		if s.Pool != "" {
			expr = "(" + expr + ") and on (Hostname) " + s.poolNodes()
		}
		return Rule{Alert: "GPUMemoryHigh", For: t.MemoryFor, Expr: expr,
			Labels:      map[string]string{"severity": SeverityWarning},
			Annotations: about("GPU {{ $labels.gpu }} on {{ $labels.Hostname }} has used over "+num(t.MemoryAbove)+"% of its framebuffer memory", "{{ $value }}% of the framebuffer has been in use for "+t.MemoryFor+": the next allocation may fail with out-of-memory.")}
	case TemperatureHigh:
		return Rule{Alert: "GPUTemperatureHigh", For: t.TemperatureFor,
			Expr:        s.gpus("DCGM_FI_DEV_GPU_TEMP") + " > " + num(t.TemperatureAbove),
			Labels:      map[string]string{"severity": SeverityWarning},
			Annotations: about("GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is above "+num(t.TemperatureAbove)+" C", "It has run at {{ $value }} C for "+t.TemperatureFor+": it will throttle its clocks, check the node's cooling.")}
	case XIDErrors:
		return Rule{Alert: "GPUXIDError", For: "0s",
			Expr:        s.gpus("DCGM_FI_DEV_XID_ERRORS") + " > 0",
			Labels:      map[string]string{"severity": SeverityCritical},
			Annotations: about("GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID error {{ $value }}", "The driver reported XID {{ $value }} (the last XID error DCGM saw): see NVIDIA's XID catalogue; many need a GPU reset or a node drain.")}
	case QuotaSaturation:
		sel := fmt.Sprintf(`namespace=%q, resourcequota=%q, resource=~"requests\\.nvidia\\.com/.+"`, s.Namespace, s.ResourceQuota)
		return Rule{Alert: "GPUQuotaSaturated", For: t.QuotaFor,
			Expr:        fmt.Sprintf(`100 * kube_resourcequota{%s, type="used"} / ignoring (type) kube_resourcequota{%s, type="hard"} > %s`, sel, sel, num(t.QuotaAbove)),
			Labels:      map[string]string{"severity": SeverityWarning},
			Annotations: about("Tenant "+Literal(s.Tenant)+" uses over "+num(t.QuotaAbove)+"% of its {{ $labels.resource }} quota", "Its pods request {{ $value }}% of the ResourceQuota's hard limit: further GPU pods will wait or be refused.")}
	default: // SlicesPending
		return Rule{Alert: "GPUPodsPending", For: t.PendingFor,
			Expr: fmt.Sprintf(`sum by (namespace, pod) (kube_pod_container_resource_requests{namespace=%q, resource=~"nvidia_com_.+"}) > 0 and on (namespace, pod) (kube_pod_status_scheduled{namespace=%q, condition="false"} == 1)`,
				s.Namespace, s.Namespace),
			Labels:      map[string]string{"severity": SeverityWarning},
			Annotations: about("Pod {{ $labels.pod }} of tenant "+Literal(s.Tenant)+" has waited "+t.PendingFor+" for GPUs", "It asks for {{ $value }} GPUs or MIG slices and has not been scheduled: the pool has no free capacity of that kind, or the tenant's queue has not admitted it.")}
	}
}

// gpus selects metric of the DCGM exporter for the scope: the series of a
// tenant's namespace (pod attribution), or every series, restricted to the
// pool's nodes by the caller's comparison (see poolFilter).
func (s Scope) gpus(metric string) string {
	if s.Pool != "" {
		return "(" + metric + " and on (Hostname) " + s.poolNodes() + ")"
	}
	return fmt.Sprintf("%s{namespace=%q}", metric, s.Namespace)
}

// EngineActive is the DCGM exporter's profiling metric of the time a GPU's
// graphics or compute engine was busy (a ratio, 0 to 1). DCGM reports it per
// MIG instance (labels GPU_I_ID and GPU_I_PROFILE), which has no
// DCGM_FI_DEV_GPU_UTIL; the exporter collects it with DCGM's profiling (DCP)
// metrics on.
const EngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"

// migInstance names a MIG instance in an annotation, after its GPU: nothing
// for a whole GPU.
const migInstance = "{{ with $labels.GPU_I_PROFILE }} MIG instance {{ $labels.GPU_I_ID }} ({{ . }}){{ end }}"

// migInstances is scale × metric of the MIG instances (series with a
// GPU_I_PROFILE) the scope watches: a tenant's namespace, or the pool's
// nodes.
func (s Scope) migInstances(scale, metric string) string {
	if s.Pool != "" {
		return "(" + scale + metric + `{GPU_I_PROFILE!=""} and on (Hostname) ` + s.poolNodes() + ")"
	}
	return fmt.Sprintf(`%s%s{namespace=%q, GPU_I_PROFILE!=""}`, scale, metric, s.Namespace)
}

// poolNodes is one series per node of the pool with the node's name in
// label Hostname, the label the DCGM exporter gives a GPU's node.
func (s Scope) poolNodes() string {
	return fmt.Sprintf(`label_replace(kube_node_labels{%s=%q}, "Hostname", "$1", "node", "(.+)")`, PoolNodeMetricLabel, s.Pool)
}

// about is the summary and description annotations.
func about(summary, description string) map[string]string {
	return map[string]string{"summary": summary, "description": description}
}

// Literal makes s, a name (a tenant's for_each key, a pool's name), a
// template-safe part of an alert label or annotation value: Prometheus
// expands those as Go text/template when an alert fires, where only "{{"
// starts an action, so each "{{" becomes an action that prints "{{". A
// name written raw could run a query at alert time or break the rule's
// expansion. The text around a Literal must not end in "{" before it nor
// start with "{" after it.
func Literal(s string) string {
	return strings.ReplaceAll(s, "{{", `{{ "{{" }}`)
}

// num writes a threshold as PromQL and people write it: 30, 92.5.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
