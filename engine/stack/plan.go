package stack

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// PlanOptions tune Plan.
type PlanOptions struct {
	// Adopt plans to take over existing objects in the way instead of
	// counting them as conflicts.
	Adopt bool
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
}

// Plan loads, validates and compiles the configuration, reads the cluster
// and diffs: the ordered change set apply would make, with the capacity of
// every pool. It never writes. Configuration errors end it before any
// cluster call; a plan with conflicts is returned as it is (see
// Plan.Summary.Conflicts).
func (s *Stack) Plan(ctx context.Context, opts PlanOptions) (*PlanResult, error) {
	gc := s.raiseGC()
	defer gc.restore()
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
	gc.fit()
	cl := s.cluster
	p, live, err := s.refreshDiff(ctx, cl, head.desired, opts.Adopt)
	if err != nil {
		return nil, err
	}
	p.ConfigSource = configSource(head.origin)
	if err := s.assess(ctx, cl, head.cfg, live, p); err != nil {
		return nil, err
	}
	return &PlanResult{Config: head.cfg, Plan: p, Context: cl.Context()}, nil
}

// refreshDiff reads the live state of desired's stack and diffs it: the
// plan, without the GPU assessment (see assess).
func (s *Stack) refreshDiff(ctx context.Context, cl Cluster, desired *engine.Desired, adopt bool) (*engine.Plan, *engine.Live, error) {
	start := time.Now()
	live, err := cl.Refresh(ctx, desired, engine.RefreshOptions{Adopt: adopt})
	if err != nil {
		return nil, nil, err
	}
	start = s.phase("refresh", start)
	p, err := engine.Diff(desired, live, engine.DiffOptions{Adopt: adopt})
	if err != nil {
		return nil, nil, fmt.Errorf("plan stack %s: %w", desired.Stack, err)
	}
	s.phase("diff", start)
	return p, live, nil
}

// assess adds to a plan what the GPUs say: the capacity of every pool
// (problems are diagnostics and end the call with a *ConfigError) and the
// pods that re-partitioning nodes would disrupt.
func (s *Stack) assess(ctx context.Context, cl Cluster, cfg *config.Config, live *engine.Live, p *engine.Plan) error {
	report, diags := capacity.CheckFrom(cfg, live.Nodes, maps.Values(live.Objects), s.opts.Catalog)
	s.report(cfg, diags)
	if diags.HasErrors() {
		return &ConfigError{Diags: diags}
	}
	p.Capacity = report
	// Inventory annotations that were not trusted (malformed, or lying
	// about the GPUs) are a warning, not a silent fallback.
	p.Warnings = append(p.Warnings, capacity.InventoryWarnings(cfg, live.Nodes, s.opts.Catalog)...)
	p.Warnings = append(p.Warnings, engine.RuntimeClassWarnings(cfg, live)...)
	p.Warnings = append(p.Warnings, engine.TaintWarnings(cfg, live)...)
	if err := disruption(ctx, cl, p); err != nil {
		return err
	}
	p.Repartitions = capacity.Repartitions(cfg, live.Nodes, engine.RepartitionedNodes(p), s.opts.Catalog)
	engine.LocateWarnings(p.Warnings, cfg)
	return nil
}

// disruption adds to a plan the pods that re-partitioning nodes would
// disrupt, with a warning per node.
func disruption(ctx context.Context, cl Cluster, p *engine.Plan) error {
	var err error
	if p.Disruption, err = gpuPods(ctx, cl, engine.RepartitionedNodes(p)); err != nil {
		return err
	}
	p.Warnings = append(p.Warnings, engine.DisruptionWarnings(p)...)
	return nil
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
