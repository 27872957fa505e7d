package sim

import (
	"context"
	"time"

	"github.com/gpuform/gpuform/engine/stack"
)

// StackCluster is a simulated cluster as engine/stack drives it: a
// stack.Cluster whose Context is stack.SimulatedContextPrefix and the
// cluster file's absolute path, so that a saved plan finds it again.
func StackCluster(c *Cluster) stack.Cluster { return stackCluster{c} }

type stackCluster struct{ *Cluster }

// Lock takes the simulated cluster's lock file for the stack.
func (s stackCluster) Lock(ctx context.Context, name, holder string, wait time.Duration) (stack.HeldLock, error) {
	release, id, err := s.Cluster.Lock(ctx, name, holder, wait)
	return stack.HeldLock{Release: release, ID: id}, err
}

// Context is stack.SimulatedContextPrefix and the cluster file's path.
func (s stackCluster) Context() string { return stack.SimulatedContextPrefix + s.path }
