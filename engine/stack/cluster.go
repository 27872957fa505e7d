package stack

import (
	"context"
	"errors"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// ForceUnlock removes the stack's apply lock if its ID is id, for a run
// that died holding it, and returns the stack's name. name "" is the
// configuration's stack (an invalid configuration is then an error);
// with a name, the configuration is still read for its cluster block,
// and ignored if invalid (or if the Stack has no Source).
func (s *Stack) ForceUnlock(ctx context.Context, name, id string) (string, error) {
	var cfg *config.Config
	var err error
	if s.src != nil {
		var head *loaded
		if head, err = s.compile(ctx, planMode()); err == nil {
			cfg = head.cfg
			if name == "" {
				name = head.desired.Stack
			}
		}
	}
	if name == "" {
		if err == nil {
			err = errors.New("force-unlock: no stack named and no configuration to name one")
		}
		return "", err
	}
	cl, err := s.open(ctx, cfg)
	if err != nil {
		return "", err
	}
	return name, cl.ForceUnlock(ctx, name, id)
}

// Nodes reads the cluster's GPU nodes and what each says it has: the
// inventory the gpuform agent publishes, else GPU Feature Discovery's
// labels. Nodes without GPUs are left out. The configuration is read for
// its cluster block only: its problems are ignored.
func (s *Stack) Nodes(ctx context.Context) ([]capacity.NodeInventory, error) {
	cfg, _, _ := s.read(ctx, "")
	cl, err := s.open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	live, err := cl.Refresh(ctx, &engine.Desired{Stack: "-"}, engine.RefreshOptions{})
	if err != nil {
		return nil, err
	}
	var nodes []capacity.NodeInventory
	for _, n := range live.Nodes {
		if inv := capacity.InventoryOf(n, s.opts.Catalog); inv.Source != capacity.SourceNone {
			nodes = append(nodes, inv)
		}
	}
	// Inventory annotations that were not trusted are warnings, at the
	// pool whose nodes they are.
	s.report(cfg, capacity.InventoryWarnings(cfg, live.Nodes, s.opts.Catalog))
	return nodes, nil
}
