package usage

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// MaxSteps is the most samples a window may have: Prometheus refuses range
// queries of more than 11,000 points per series.
const MaxSteps = 11000

// NewWindow is the window of whole steps from from to to (the last partial
// step dropped); an error when it is empty or too long.
func NewWindow(from, to time.Time, step time.Duration) (Window, error) {
	if step <= 0 {
		return Window{}, fmt.Errorf("the step must be positive, got %s", step)
	}
	n := int64(to.Sub(from) / step)
	if n < 1 {
		return Window{}, fmt.Errorf("the window from %s to %s holds no step of %s", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), step)
	}
	if n > MaxSteps {
		return Window{}, fmt.Errorf("the window holds %d steps of %s, more than Prometheus's %d: use a longer --step", n, step, MaxSteps)
	}
	return Window{From: from, To: from.Add(time.Duration(n) * step), Step: step}, nil
}

// Steps is the number of samples of w.
func (w Window) Steps() int { return int(w.To.Sub(w.From) / w.Step) }

// index is the sample of w at t, false when t is not one.
func (w Window) index(t time.Time) (int, bool) {
	d := t.Sub(w.From)
	if d < 0 || d%w.Step != 0 {
		return 0, false
	}
	k := int(d / w.Step)
	return k, k < w.Steps()
}

// Compute runs the report's queries through q over w and attributes their
// samples to the tenants (by namespace) and pools (by node labels, else by
// the resource the tenant's quotas hold) of cfg.
func Compute(ctx context.Context, q Querier, cfg *config.Config, cat *mig.Catalog, w Window) (*Report, error) {
	results := map[string][]Series{}
	dropped := 0
	last := w.To.Add(-w.Step)
	var missing []Input
	for _, in := range Inputs() {
		s, err := q.QueryRange(ctx, in.Query, w.From, last, w.Step)
		if err != nil {
			return nil, fmt.Errorf("querying Prometheus for %s: %w", in.Query, err)
		}
		if len(s) == 0 {
			missing = append(missing, in)
		}
		dropped += dropBad(s)
		results[in.Query] = s
	}
	t := newTenancy(cfg, cat)
	a := &accumulator{t: t, w: w, nodes: t.nodePools(results[QueryNodes]), rows: map[[2]string]*Row{}, lines: map[string]*Timeline{}, idle: map[[2]string][]float64{}, dropped: dropped}
	for _, tn := range cfg.Tenants {
		for _, p := range t.poolsFor(tn, "") {
			a.row(tn, p)
		}
	}
	for _, s := range results[QueryAllocated] {
		a.allocated(s)
	}
	for _, s := range results[QueryUsed] {
		a.used(s, MetricName(mig.ResourceGPU), false)
	}
	for _, s := range results[QueryUsedMIG] {
		a.used(s, MetricName(mig.Resource(s.Labels["GPU_I_PROFILE"])), true)
	}
	for _, s := range results[QueryQuota] {
		a.quota(s)
	}
	rep := a.report(cfg)
	rep.Missing = missing
	return rep, nil
}

// accumulator adds samples up per row and per tenant timeline.
type accumulator struct {
	t     *tenancy
	w     Window
	nodes map[string]string // node -> pool
	rows  map[[2]string]*Row
	lines map[string]*Timeline
	// idle is quota hard - used at each step, per row (negative when a
	// lowered quota is below what is in use: no idle quota then).
	idle            map[[2]string][]float64
	unAlloc, unUsed float64
	// dropped counts the samples dropBad left out.
	dropped int
}

func (a *accumulator) row(tn *config.Tenant, pool string) *Row {
	key := [2]string{tn.Name, pool}
	if r := a.rows[key]; r != nil {
		return r
	}
	r := &Row{Tenant: tn.Name, Namespace: tn.Namespace, Pool: pool}
	if p := a.t.pools[pool]; p != nil {
		r.Price = p.cfg.PricePerGPUHour
	}
	a.rows[key] = r
	if a.lines[tn.Name] == nil {
		n := a.w.Steps()
		a.lines[tn.Name] = &Timeline{Tenant: tn.Name, Allocated: make([]float64, n), Used: make([]float64, n), Quota: make([]float64, n)}
	}
	return r
}

// pool is where a sample of tenant tn on node for resource belongs: the
// node's pool, else the one pool of tn's quotas holding the resource ("-"
// when none or several do).
func (a *accumulator) pool(tn *config.Tenant, node, resource string) string {
	if p := a.nodes[node]; p != "" {
		return p
	}
	if c := a.t.poolsFor(tn, resource); len(c) == 1 {
		return c[0]
	}
	return "-"
}

// MaxSampleValue is the largest sample value a report takes: every query
// counts GPUs, GPU shares or busy fractions, so a larger value is a broken
// or hostile answer, and summing such values could reach +Inf.
const MaxSampleValue = 1e6

// dropBad removes the samples that are NaN, infinite, negative or above
// MaxSampleValue from every series, in place, and returns how many it
// removed.
func dropBad(series []Series) int {
	n := 0
	for i := range series {
		kept := series[i].Points[:0]
		for _, p := range series[i].Points {
			if math.IsNaN(p.V) || p.V < 0 || p.V > MaxSampleValue { // ±Inf is out of range too
				n++
				continue
			}
			kept = append(kept, p)
		}
		series[i].Points = kept
	}
	return n
}

// each calls f with every sample of s inside the window, as GPUs × hours.
func (a *accumulator) each(s Series, f func(k int, v float64)) {
	for _, p := range s.Points {
		if k, ok := a.w.index(p.T); ok {
			f(k, p.V)
		}
	}
}

func (a *accumulator) share(pool, resource string) float64 {
	if p := a.t.pools[pool]; p != nil {
		return p.share[resource]
	}
	return 1
}

func (a *accumulator) allocated(s Series) {
	hours := a.w.Step.Hours()
	tn := a.t.tenants[s.Labels["namespace"]]
	if tn == nil {
		a.each(s, func(_ int, v float64) { a.unAlloc += v * hours })
		return
	}
	res := s.Labels["resource"]
	pool := a.pool(tn, s.Labels["node"], res)
	r, line, share := a.row(tn, pool), a.lines[tn.Name], a.share(pool, res)
	a.each(s, func(k int, v float64) {
		r.Allocated += v * share * hours
		line.Allocated[k] += v * share
	})
}

// used adds a series of busy fractions of resource (a whole GPU's
// utilization, or a MIG instance's engine activity, which slice scales by
// the instance's share of its GPU).
func (a *accumulator) used(s Series, resource string, slice bool) {
	hours := a.w.Step.Hours()
	host := s.Labels["Hostname"]
	tn := a.t.tenants[s.Labels["namespace"]]
	if tn == nil {
		share := a.sliceShare(a.nodes[host], resource, slice)
		a.each(s, func(_ int, v float64) { a.unUsed += v * share * hours })
		return
	}
	pool := a.pool(tn, host, resource)
	r, line, share := a.row(tn, pool), a.lines[tn.Name], a.sliceShare(pool, resource, slice)
	a.each(s, func(k int, v float64) {
		r.Used += v * share * hours
		line.Used[k] += v * share
	})
}

// sliceShare is the GPU share of a MIG instance of resource on pool (1 for
// a whole GPU): the pool's, else, when the pool is not known, that of the
// first pool whose GPU offers the profile (0 when none does).
func (a *accumulator) sliceShare(pool, resource string, slice bool) float64 {
	if !slice {
		return 1
	}
	if p := a.t.pools[pool]; p != nil {
		return p.share[resource]
	}
	for _, name := range a.t.order {
		if v := a.t.pools[name].share[resource]; v > 0 {
			return v
		}
	}
	return 0
}

// quota adds a ResourceQuota series (type hard or used) of one resource to
// the pools of the tenant's quotas holding it, split as its quota blocks
// split it.
func (a *accumulator) quota(s Series) {
	tn := a.t.tenants[s.Labels["namespace"]]
	kind := s.Labels["type"]
	if tn == nil || kind != "hard" && kind != "used" {
		return
	}
	res := MetricName(strings.TrimPrefix(s.Labels["resource"], "requests."))
	pools := a.t.poolsFor(tn, res)
	var total int64
	for _, p := range pools {
		total += a.t.quota[tn][p][res]
	}
	hours := a.w.Step.Hours()
	for _, p := range pools {
		frac := float64(a.t.quota[tn][p][res]) / float64(total) * a.share(p, res)
		r, line, key := a.row(tn, p), a.lines[tn.Name], [2]string{tn.Name, p}
		if a.idle[key] == nil {
			a.idle[key] = make([]float64, a.w.Steps())
		}
		a.each(s, func(k int, v float64) {
			if kind == "hard" {
				r.Quota += v * frac * hours
				a.idle[key][k] += v * frac
				line.Quota[k] += v * frac
			} else {
				a.idle[key][k] -= v * frac
			}
		})
	}
}

func (a *accumulator) report(cfg *config.Config) *Report {
	rep := &Report{Window: a.w, Currency: "USD", UnattributedAllocated: a.unAlloc, UnattributedUsed: a.unUsed, Dropped: a.dropped}
	for _, p := range cfg.Pools {
		if p.PricePerGPUHour > 0 {
			rep.Currency = p.Currency
			break
		}
	}
	for key, r := range a.rows {
		for _, v := range a.idle[key] {
			r.Idle += math.Max(v, 0) * a.w.Step.Hours()
		}
		r.Cost = r.Allocated * r.Price
		rep.Rows = append(rep.Rows, *r)
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		if rep.Rows[i].Tenant != rep.Rows[j].Tenant {
			return rep.Rows[i].Tenant < rep.Rows[j].Tenant
		}
		return rep.Rows[i].Pool < rep.Rows[j].Pool
	})
	for _, r := range rep.Rows {
		if l := a.lines[r.Tenant]; l != nil && (len(rep.Tenants) == 0 || rep.Tenants[len(rep.Tenants)-1].Tenant != r.Tenant) {
			rep.Tenants = append(rep.Tenants, *l)
		}
	}
	for k := range a.w.Steps() {
		rep.Times = append(rep.Times, a.w.From.Add(time.Duration(k)*a.w.Step))
	}
	return rep
}
