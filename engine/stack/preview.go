package stack

import (
	"context"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
)

// PreviewOptions tune Preview.
type PreviewOptions struct {
	// Base is the git ref of the configuration the change is compared
	// with (origin/main, a commit), read from the same Source.
	Base string
	// Adopt plans to take over existing objects in the way.
	Adopt bool
	// BaseUnreadable, when set, is called when the configuration at Base
	// cannot be read or is invalid, with its errors; the preview then shows
	// every block as added.
	BaseUnreadable func(cfg *config.Config, errs hcl.Diagnostics)
}

// PreviewResult is a pull request's preview and what it was made from.
type PreviewResult struct {
	// Preview is the semantic config diff, the plan of the Stack's
	// configuration against the cluster, and the capacity of both
	// configurations on the same live nodes.
	Preview *engine.Preview
	// Config is the Stack's configuration (the pull request's head).
	Config *config.Config
	// Context names the cluster, for a saved plan.
	Context string
}

// Preview is what merging a change would do: the Stack's configuration
// (the head) against the one at opts.Base in the same repository. The
// head's capacity problems do not end it (a pull request needs to see
// them): they are in Preview.CapacityProblems, and their diagnostics went
// to Options.Diagnostics.
func (s *Stack) Preview(ctx context.Context, opts PreviewOptions) (*PreviewResult, error) {
	mode := planMode()
	head, err := s.compile(ctx, mode)
	if err != nil {
		return nil, err
	}
	pv := &engine.Preview{}
	base, files, diags := s.read(ctx, opts.Base)
	pv.Base = &engine.ConfigSource{Repo: head.origin.Repo, Ref: opts.Base, Commit: files.Origin.Commit}
	if diags.HasErrors() {
		if opts.BaseUnreadable != nil {
			opts.BaseUnreadable(base, onlyErrors(diags))
		}
		pv.BaseError = engine.FirstError(diags)
		base = nil
	}
	cl, err := s.open(ctx, head.cfg)
	if err != nil {
		return nil, err
	}
	rd, err := s.refreshDiff(ctx, cl, head, PlanOptions{Adopt: opts.Adopt})
	if err != nil {
		return nil, err
	}
	p, live := rd.plan, rd.live
	p.ConfigSource = configSource(head.origin)
	pv.Plan = p
	pv.ConfigChanges = engine.ConfigDiff(base, head.cfg)

	p.Capacity = rd.capacity.report
	s.report(head.cfg, rd.capacity.diags)
	for _, d := range onlyErrors(rd.capacity.diags) {
		pv.CapacityProblems = append(pv.CapacityProblems, strings.TrimSuffix(d.Detail, "."))
	}
	if base != nil {
		if before, _ := capacity.CheckFrom(base, live.Nodes, live.DRA, compile.AppliedQuota(base, quotaClaims(live)), s.opts.Catalog); before != nil {
			pv.CapacityBefore = before.Rows
		}
	}
	if err := disruption(ctx, cl, p, capacity.ModeSwitches(head.cfg, live.Nodes, appliedDRA(live))); err != nil {
		return nil, err
	}
	p.Repartitions = capacity.Repartitions(head.cfg, live.Nodes, live.DRA, engine.RepartitionedNodes(p), s.opts.Catalog)
	engine.LocateWarnings(p.Warnings, head.cfg)
	return &PreviewResult{Preview: pv, Config: head.cfg, Context: cl.Context()}, nil
}
