package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/providers/kubernetes"
	"github.com/gpuform/gpuform/providers/sim"
)

// cluster is what plan and apply need of a cluster: a real one through
// client-go, or the embedded simulated one.
type cluster interface {
	engine.Target
	Refresh(ctx context.Context, d *engine.Desired, opts engine.RefreshOptions) (*engine.Live, error)
	// Lock takes the stack's apply lock, waiting up to wait.
	Lock(ctx context.Context, stack, holder string, wait time.Duration) (heldLock, error)
	ForceUnlock(ctx context.Context, stack, id string) error
	// GPUPods lists the pods using GPUs on each of the named nodes.
	GPUPods(ctx context.Context, nodes []string) (map[string][]string, error)
	// Context names the cluster so that a saved plan can find it again.
	Context() string
}

// simulatedPrefix marks a saved plan's context as a simulated cluster file.
const simulatedPrefix = "simulated:"

// openCluster connects to the cluster --simulated, the cluster block or the
// kubeconfig names (cfg may be nil).
func (g *globals) openCluster(cfg *config.Config) (cluster, error) {
	if g.simulated != "" {
		return openSim(g.path(g.simulated))
	}
	if cfg != nil && cfg.Cluster != nil && cfg.Cluster.Simulated != "" && g.kubeconfig == "" && g.context == "" {
		return openSim(filepath.Join(g.dir(), cfg.Cluster.Simulated))
	}
	client, err := g.kubeClient(cfg)
	if err != nil {
		return nil, err
	}
	return kubeCluster{client}, nil
}

// openSavedCluster reconnects to the cluster a saved plan was made against,
// unless flags name another.
func (g *globals) openSavedCluster(savedContext string) (cluster, error) {
	if path, ok := strings.CutPrefix(savedContext, simulatedPrefix); ok && g.simulated == "" && g.kubeconfig == "" && g.context == "" {
		return openSim(path)
	}
	if g.simulated == "" && g.context == "" && !strings.HasPrefix(savedContext, simulatedPrefix) {
		g.context = savedContext
	}
	return g.openCluster(nil)
}

func openSim(path string) (cluster, error) {
	c, err := sim.Open(path)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(path)
	return simCluster{c, abs}, nil
}

type simCluster struct {
	*sim.Cluster
	path string
}

func (s simCluster) Lock(ctx context.Context, stack, holder string, wait time.Duration) (heldLock, error) {
	release, id, err := s.Cluster.Lock(ctx, stack, holder, wait)
	return heldLock{Release: release, ID: id}, err
}

func (s simCluster) Context() string { return simulatedPrefix + s.path }

// kubeCluster adapts the Kubernetes provider to cluster.
type kubeCluster struct{ *kubernetes.Client }

func (k kubeCluster) Lock(ctx context.Context, stack, holder string, wait time.Duration) (heldLock, error) {
	l, err := k.Client.Lock(ctx, stack, kubernetes.LockOptions{Wait: wait, Holder: holder})
	if err != nil {
		return heldLock{}, err
	}
	return heldLock{Release: l.Release, ID: l.ID, Lost: l.Lost()}, nil
}

// heldLock is a stack's apply lock while it is held.
type heldLock struct {
	Release func(context.Context) error
	ID      string
	// Lost is closed when the lock may no longer be held (nil: never).
	Lost <-chan struct{}
}

func (k kubeCluster) Context() string { return k.Client.Context }
