package stack

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// PlanOptions tune Plan.
type PlanOptions struct {
	// Adopt plans to take over existing objects in the way instead of
	// counting them as conflicts.
	Adopt bool
	// Destroy plans to delete everything the stack's record holds
	// (engine.DestroyDesired), refusing protected tenants (destroy.go).
	Destroy bool
	// Targets narrow the plan to blocks and what they depend on
	// (engine.Narrow).
	Targets []string
}

// PlanResult is a plan and what it was made from.
type PlanResult struct {
	// Config is the configuration planned.
	Config *config.Config
	// Plan is its change set against the cluster, with the GPU capacity,
	// warnings and the pods re-partitioning would disrupt.
	Plan *engine.Plan
	// Context names the cluster, for a saved plan (engine.NewPlanFile).
	Context string
	// Refused says apply, with its default safety flags, would refuse
	// the plan (a protected tenant's namespace, too many deletes); the
	// reasons are among the plan's warnings (refusals.go).
	Refused bool
}

// Plan loads, validates and compiles the configuration, reads the cluster
// and diffs: the ordered change set apply would make, with the capacity of
// every pool. It never writes. Configuration errors end it before any
// cluster call; a plan with conflicts is returned as it is (see
// Plan.Summary.Conflicts).
func (s *Stack) Plan(ctx context.Context, opts PlanOptions) (*PlanResult, error) {
	mode := planMode()
	mode.valid = func(cfg *config.Config) error {
		// The configuration is valid: the stack's LISTs can go out while
		// it compiles.
		cl, err := s.open(ctx, cfg)
		if err == nil {
			if pf, ok := cl.(Prefetcher); ok {
				pf.Prefetch(ctx, cfg.Settings.Stack)
			}
		}
		return err
	}
	head, err := s.compile(ctx, mode)
	if err != nil {
		return nil, err
	}
	cl := s.cluster
	d, err := s.refreshDiff(ctx, cl, head, opts)
	if err != nil {
		return nil, err
	}
	d.plan.ConfigSource = configSource(head.origin)
	if err := s.assess(ctx, cl, head.cfg, d); err != nil {
		return nil, err
	}
	return &PlanResult{Config: head.cfg, Plan: d.plan, Context: cl.Context(), Refused: warnApplyRefuses(d.plan)}, nil
}

// diffed is a plan just made from a refresh, with what assess adds to it
// from.
type diffed struct {
	plan     *engine.Plan
	live     *engine.Live
	capacity capacityCheck
}

// refreshDiff reads the live state of head's stack and diffs it: the
// plan, without the GPU assessment (see assess). The GPU capacity needs
// only the configuration and what the refresh read, not the diff: it is
// checked on another core meanwhile (both only read live).
func (s *Stack) refreshDiff(ctx context.Context, cl Cluster, head *loaded, opts PlanOptions) (diffed, error) {
	start := time.Now()
	desired := head.desired
	if opts.Destroy {
		desired = engine.DestroyDesired(desired)
	}
	live, err := cl.Refresh(ctx, desired, engine.RefreshOptions{Adopt: opts.Adopt})
	if err != nil {
		return diffed{}, err
	}
	start = s.phase("refresh", start)
	checked := make(chan capacityCheck, 1) // never blocks: the check ends even when the diff fails
	go func() { checked <- checkCapacity(head.cfg, live, s.opts.Catalog) }()
	p, err := engine.Diff(desired, live, engine.DiffOptions{Adopt: opts.Adopt})
	if err != nil {
		return diffed{}, fmt.Errorf("plan stack %s: %w", head.desired.Stack, err)
	}
	if err := shape(p, head.desired, opts); err != nil {
		return diffed{}, err
	}
	s.phase("diff", start)
	return diffed{plan: p, live: live, capacity: <-checked}, nil
}

// capacityCheck is the capacity of every pool, and its problems.
type capacityCheck struct {
	report *capacity.Report
	diags  hcl.Diagnostics
}

// checkCapacity checks the capacity of cfg's pools on the nodes and the
// quotas live holds (capacity.CheckFrom).
func checkCapacity(cfg *config.Config, live *engine.Live, cat *mig.Catalog) capacityCheck {
	r, diags := capacity.CheckFrom(cfg, live.Nodes, live.DRA, compile.AppliedQuota(cfg, quotaClaims(live)), cat)
	return capacityCheck{r, diags}
}

// quotaClaims yields the objects of live that compile.AppliedQuota reads
// quotas from (compile.ClaimsQuota), picked by their keys: the others,
// most of a stack, are not read at all. A settled object is read in its
// desired object (engine.Live.Compared): its slim copy keeps no spec.
func quotaClaims(live *engine.Live) iter.Seq[*unstructured.Unstructured] {
	return func(yield func(*unstructured.Unstructured) bool) {
		claims := func(k engine.Key) bool { return compile.ClaimsQuota(k.Group, k.Kind) }
		for _, u := range live.Compared(claims) {
			if !yield(u) {
				return
			}
		}
	}
}

// assess adds to d's plan what the GPUs say: the capacity of every pool
// (problems are diagnostics and end the call with an *engine.ConfigError) and the
// pods that re-partitioning nodes would disrupt.
func (s *Stack) assess(ctx context.Context, cl Cluster, cfg *config.Config, d diffed) error {
	p, live := d.plan, d.live
	if !p.Destroy {
		// A destroy leaves none of the configuration's capacity to check.
		s.report(cfg, d.capacity.diags)
		if d.capacity.diags.HasErrors() {
			return &engine.ConfigError{Diags: d.capacity.diags}
		}
		p.Capacity = d.capacity.report
	}
	// Inventory annotations that were not trusted (malformed, or lying
	// about the GPUs) are a warning, not a silent fallback.
	p.Warnings = append(p.Warnings, capacity.InventoryWarnings(cfg, live.Nodes, s.opts.Catalog)...)
	p.Warnings = append(p.Warnings, engine.RuntimeClassWarnings(cfg, live)...)
	p.Warnings = append(p.Warnings, engine.TaintWarnings(cfg, live)...)
	p.Warnings = append(p.Warnings, engine.PodWarnings(cfg, live)...)
	if err := disruption(ctx, cl, p, capacity.ModeSwitches(cfg, live.Nodes, appliedDRA(live))); err != nil {
		return err
	}
	p.Repartitions = capacity.Repartitions(cfg, live.Nodes, live.DRA, engine.RepartitionedNodes(p), s.opts.Catalog)
	engine.LocateWarnings(p.Warnings, cfg)
	return nil
}

// disruption adds to a plan the pods that re-partitioning nodes, or
// moving a pool's GPUs between the device plugin and DRA (switches),
// would disrupt, with a warning per node, and a warning per pool that
// switches saying what the move takes.
func disruption(ctx context.Context, cl Cluster, p *engine.Plan, switches []capacity.ModeSwitch) error {
	nodes := engine.RepartitionedNodes(p)
	for _, sw := range switches {
		for _, n := range sw.Nodes {
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	var err error
	if p.Disruption, err = gpuPods(ctx, cl, nodes); err != nil {
		return err
	}
	p.Warnings = append(p.Warnings, engine.DisruptionWarnings(p)...)
	p.Warnings = append(p.Warnings, engine.ModeSwitchWarnings(switches, p.Disruption)...)
	return nil
}

// appliedDRA are the addresses of the pools whose DeviceClasses the stack
// holds: the DRA pools as last applied.
func appliedDRA(live *engine.Live) map[string]bool {
	out := map[string]bool{}
	for k, o := range live.Objects {
		if k.Group == engine.KindDeviceClass.Group && k.Kind == engine.KindDeviceClass.Kind {
			out[o.GetAnnotations()[engine.AnnotAddress]] = true
		}
	}
	return out
}

// gpuPods returns the pods using GPUs on each of nodes that has some (nil
// when none has).
func gpuPods(ctx context.Context, cl Cluster, nodes []string) (map[string][]string, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	pods, err := cl.GPUPods(ctx, nodes)
	if err != nil {
		return nil, err
	}
	var out map[string][]string
	for n, list := range pods {
		if len(list) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[n] = list
		}
	}
	return out, nil
}

// configSource is a source as plans record it: nil outside git.
func configSource(s engine.ConfigSource) *engine.ConfigSource {
	if s.Commit == "" {
		return nil
	}
	return &s
}
