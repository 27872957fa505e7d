package main

import (
	"context"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/providers/git"
	"github.com/gpuform/gpuform/providers/kubernetes"
	"github.com/gpuform/gpuform/providers/sim"
)

// connection is what a command adds to the flags to find its cluster.
type connection struct {
	// inCluster prefers the pod's service account (drift's CronJob).
	inCluster bool
	// savedContext is the context a saved plan was made against.
	savedContext string
	// untrusted: the configuration is a pull request's or a git ref's.
	untrusted bool
}

// target is the cluster the flags, the cluster block of cfg (nil: none)
// and c name, resolved once by kubernetes.Resolve.
func (g *globals) target(cfg *config.Config, c connection) (kubernetes.Target, error) {
	opts := kubernetes.ConnectionOptions{
		Flags:                kubernetes.Selection{Kubeconfig: g.kubeconfig, Context: g.context, Simulated: g.simulated},
		Dir:                  g.dir(),
		SavedContext:         c.savedContext,
		Env:                  g.env,
		InCluster:            c.inCluster,
		Untrusted:            c.untrusted,
		AllowBlockKubeconfig: g.allowConfigKubeconfig,
		Block:                kubernetes.BlockSelection(cfg),
	}
	return kubernetes.Resolve(opts)
}

// connect opens the cluster target names: the embedded simulated one, or
// Kubernetes through client-go.
func (g *globals) connect(c connection) stack.Connect {
	return func(_ context.Context, cfg *config.Config) (stack.Cluster, error) {
		if isFleet(cfg) {
			// Each member has its own cluster: the command goes on over them.
			return nil, &stack.FleetError{Members: cfg.Fleet}
		}
		t, err := g.target(cfg, c)
		if err != nil {
			return nil, err
		}
		if t.Simulated != "" {
			s, err := sim.OpenIn(t.SimulatedDir, t.Simulated, sim.CatalogGPUs{})
			if err != nil {
				return nil, err
			}
			return sim.StackCluster(s), nil
		}
		client, err := kubernetes.NewClient(t, kubernetes.Options{WrapTransport: g.kubeTransport()})
		if err != nil {
			return nil, err
		}
		return kubernetes.StackCluster(client), nil
	}
}

// newStack is the pipeline over the configuration (--chdir as it is on
// disk, or repo at ref) and the cluster c reaches. A --var-file problem is
// printed and ends the run; done removes a clone.
func (g *globals) newStack(repo, ref string, c connection) (st *stack.Stack, done func(), err error) {
	opts, diags := g.loadOptions()
	if diags.HasErrors() {
		g.writeDiags(nil, diags)
		return nil, nil, &exitError{code: 1}
	}
	c.untrusted = c.untrusted || repo != "" || ref != ""
	src := git.NewSource(git.SourceOptions{Dir: g.dir(), Repo: repo, Ref: ref, Env: g.env})
	return stack.New(src, g.connect(c), g.stackOptions(opts)), src.Close, nil
}

// stackOptions are the pipeline's options: the variables, hooks that print
// diagnostics and timings.
func (g *globals) stackOptions(load config.Options) stack.Options {
	return stack.Options{Load: load, Diagnostics: g.writeDiags, Phase: g.phase, Fleet: g.keepFleet}
}
