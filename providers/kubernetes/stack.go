package kubernetes

import (
	"context"
	"time"

	"github.com/gpuform/gpuform/engine/stack"
)

// StackCluster is a Client as engine/stack drives it: a stack.Cluster
// (and a stack.Prefetcher).
func StackCluster(c *Client) stack.Cluster { return stackCluster{c} }

type stackCluster struct{ *Client }

// Lock takes the stack's lock, renewed in the background until released,
// and fenced: see Lock.
func (k stackCluster) Lock(ctx context.Context, name, holder string, wait time.Duration) (stack.HeldLock, error) {
	l, err := k.Client.Lock(ctx, name, LockOptions{Wait: wait, Holder: holder})
	if err != nil {
		return stack.HeldLock{}, err
	}
	return stack.HeldLock{Release: l.Release, ID: l.ID, Lost: l.Lost(), Err: l.Err, WritableAt: l.WritableAt}, nil
}

// Context is the kubeconfig context the client was built for.
func (k stackCluster) Context() string { return k.Client.Context }
