package usage

import (
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// pricing is what the configuration says of one pool: its price and the
// GPU share of each resource its nodes offer.
type pricing struct {
	cfg *config.Pool
	// share is the GPU share of one unit of each resource, keyed by
	// kube-state-metrics' spelling (nvidia_com_mig_3g_40gb).
	share map[string]float64
}

// tenancy indexes the configuration for attribution.
type tenancy struct {
	pools   map[string]*pricing
	order   []string                                       // pool names in configuration order
	tenants map[string]*config.Tenant                      // by namespace
	quota   map[*config.Tenant]map[string]map[string]int64 // pool -> resource -> count
}

// MetricName spells a Kubernetes resource name the way kube-state-metrics
// does in its resource label: nvidia.com/mig-3g.40gb is
// nvidia_com_mig_3g_40gb (every character outside [a-zA-Z0-9_] is "_").
func MetricName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Share is the GPU share of one unit of resource on a pool: 1 for a whole
// GPU, 1/replicas for a time-slicing or MPS replica (nvidia.com/gpu, or
// nvidia.com/gpu.shared when the pool renames its replicas), and for a MIG
// slice its compute slices over the GPU's (3g.40gb on an A100: 3/7). It is 0
// for a resource the pool's GPU does not offer.
func Share(p *config.Pool, g *mig.GPU, resource string) float64 {
	key := MetricName(strings.TrimPrefix(resource, "requests."))
	if key == MetricName(capacity.GPUResource(p)) {
		if s := p.Shared(); s != nil && s.Replicas > 0 {
			return 1 / float64(s.Replicas)
		}
		return 1
	}
	if key == MetricName(mig.ResourceGPU) || key == MetricName(mig.ResourceGPUShared) {
		return 0
	}
	if g == nil || !g.MIG || g.ComputeSlices == 0 {
		return 0
	}
	for _, prof := range g.Profiles {
		if MetricName(mig.Resource(prof.Name)) == key {
			return float64(prof.ComputeSlices) / float64(g.ComputeSlices)
		}
	}
	return 0
}

func newTenancy(cfg *config.Config, cat *mig.Catalog) *tenancy {
	t := &tenancy{pools: map[string]*pricing{}, tenants: map[string]*config.Tenant{}, quota: map[*config.Tenant]map[string]map[string]int64{}}
	for _, p := range cfg.Pools {
		g, _ := cat.Lookup(p.GPU)
		pr := &pricing{cfg: p, share: map[string]float64{}}
		pr.share[MetricName(capacity.GPUResource(p))] = Share(p, g, capacity.GPUResource(p))
		if g != nil {
			for _, prof := range g.Profiles {
				r := mig.Resource(prof.Name)
				pr.share[MetricName(r)] = Share(p, g, r)
			}
		}
		t.pools[p.Name] = pr
		t.order = append(t.order, p.Name)
	}
	for _, tq := range capacity.QuotasOf(cfg).Tenants {
		t.tenants[tq.Tenant.Namespace] = tq.Tenant
		q := map[string]map[string]int64{}
		for _, b := range tq.Blocks {
			res := map[string]int64{}
			for r, n := range b.Nominal {
				res[MetricName(r)] = n
			}
			q[b.Pool] = res
		}
		t.quota[tq.Tenant] = q
	}
	return t
}

// nodePools places each node in the first pool (in configuration order)
// whose node selector its kube_node_labels series matches.
func (t *tenancy) nodePools(nodes []Series) map[string]string {
	out := map[string]string{}
	for _, s := range nodes {
		node := s.Labels["node"]
		if node == "" || out[node] != "" {
			continue
		}
		for _, name := range t.order {
			sel := t.pools[name].cfg.NodeSelector
			match := len(sel) > 0
			for k, v := range sel {
				if s.Labels["label_"+MetricName(k)] != v {
					match = false
				}
			}
			if match {
				out[node] = name
				break
			}
		}
	}
	return out
}

// poolsFor are the pools of tenant tn's quotas that hold resource (all of
// its pools for an empty resource), in configuration order.
func (t *tenancy) poolsFor(tn *config.Tenant, resource string) []string {
	var out []string
	for _, name := range t.order {
		q, ok := t.quota[tn][name]
		if !ok {
			continue
		}
		if resource == "" || q[resource] > 0 {
			out = append(out, name)
		}
	}
	return out
}
