// Package usage computes gpuform usage's chargeback: per tenant and pool,
// the GPU-hours allocated (running pods' requests), used (DCGM utilization of
// whole GPUs, engine activity of MIG instances),
// the quota left idle and their cost at the pools' prices, from range queries
// over kube-state-metrics' and the DCGM exporter's series. It reads through a
// Querier and does no I/O of its own.
package usage

import (
	"context"
	"time"
)

// The PromQL queries the report is made of; docs/usage.md explains each.
const (
	// QueryAllocated is what running pods request, by namespace, node and
	// resource (kube-state-metrics spells nvidia.com/mig-3g.40gb as
	// nvidia_com_mig_3g_40gb).
	QueryAllocated = `sum by (namespace, node, resource) (kube_pod_container_resource_requests{resource=~"nvidia_com_gpu|nvidia_com_gpu_shared|nvidia_com_mig_.+"} * on (namespace, pod) group_left () (kube_pod_status_phase{phase="Running"} == 1))`
	// QueryUsed is the busy fraction of the GPUs the DCGM exporter
	// attributes to a pod, by namespace and node (label Hostname).
	QueryUsed = `sum by (namespace, Hostname) (DCGM_FI_DEV_GPU_UTIL{namespace!=""}) / 100`
	// QueryUsedMIG is the busy fraction of the MIG instances the DCGM
	// exporter attributes to a pod, by namespace, node and profile: the
	// profiling metric DCGM_FI_PROF_GR_ENGINE_ACTIVE (a ratio of the
	// instance's time), which DCGM reports per GPU instance (labels
	// GPU_I_ID and GPU_I_PROFILE) where it has no DCGM_FI_DEV_GPU_UTIL.
	// Series without GPU_I_PROFILE (whole GPUs) are left to QueryUsed.
	QueryUsedMIG = `sum by (namespace, Hostname, GPU_I_PROFILE) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace!="", GPU_I_PROFILE!=""})`
	// QueryQuota is the tenants' ResourceQuota limits and usage of GPU
	// resources (type hard or used), by namespace and resource.
	QueryQuota = `sum by (namespace, resource, type) (kube_resourcequota{resource=~"requests\\.nvidia\\.com/.+"})`
	// QueryNodes is every node's labels, which place it in a pool.
	QueryNodes = `kube_node_labels`
)

// Series is one time series of a range query's result.
type Series struct {
	// Labels are the series' labels; Points its samples in time order.
	Labels map[string]string
	Points []Point
}

// Point is one sample of a Series.
type Point struct {
	// T is the sample's time, V its value.
	T time.Time
	V float64
}

// Querier runs PromQL range queries (the Prometheus HTTP API's
// /api/v1/query_range).
type Querier interface {
	QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Series, error)
}

// Window is the span a report covers: Steps samples Step apart from From,
// each standing for the Step that follows it, so To = From + Steps × Step.
type Window struct {
	From, To time.Time
	Step     time.Duration
}

// Report is the chargeback of one window.
type Report struct {
	// Window is the span the report covers.
	Window Window
	// Currency is the ISO 4217 code of the prices: that of the first pool
	// with a price, USD when none has one.
	Currency string
	// Rows are one per tenant and pool, sorted by tenant then pool.
	Rows []Row
	// Tenants are the per-tenant totals over time, in the order of Rows.
	Tenants []Timeline
	// Times are the sample times of every Timeline.
	Times []time.Time
	// Unattributed counts the GPU-hours of namespaces or nodes no tenant
	// or pool of the configuration claims (allocated, used).
	UnattributedAllocated, UnattributedUsed float64
	// Dropped counts the samples left out as NaN, infinite, negative or
	// above MaxSampleValue; the command warns of them.
	Dropped int
	// Missing are the inputs whose query returned no series over the
	// window, in the order of Inputs.
	Missing []Input
}

// Row is one tenant's figures on one pool over the window. Hours are
// GPU-hours: a MIG slice counts its share of a GPU (compute slices of the
// profile / compute slices of the GPU), a time-slicing replica 1/replicas.
type Row struct {
	// Tenant and Pool name the tenant and pool; Namespace is the tenant's
	// namespace.
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
	Pool      string `json:"pool"`
	// Allocated is the GPU-hours running pods requested.
	Allocated float64 `json:"allocated_gpu_hours"`
	// Used is the GPU-hours the GPUs were busy for the tenant's pods.
	Used float64 `json:"used_gpu_hours"`
	// Quota is the GPU-hours of the tenant's ResourceQuota on the pool.
	Quota float64 `json:"quota_gpu_hours"`
	// Idle is the GPU-hours of quota no pod used (hard - used, per sample).
	Idle float64 `json:"idle_quota_gpu_hours"`
	// Price is the pool's price per GPU-hour.
	Price float64 `json:"price_per_gpu_hour"`
	// Cost is Allocated × Price.
	Cost float64 `json:"cost"`
}

// Utilization is Used / Allocated (0 when nothing was allocated).
func (r Row) Utilization() float64 {
	if r.Allocated == 0 {
		return 0
	}
	return r.Used / r.Allocated
}

// Timeline is one tenant's GPUs (in GPU equivalents) at each of the
// report's Times.
type Timeline struct {
	// Tenant names the tenant.
	Tenant string
	// Allocated, Used and Quota are the GPUs its running pods requested,
	// kept busy and its quotas allow, one value per Time.
	Allocated, Used, Quota []float64
}
