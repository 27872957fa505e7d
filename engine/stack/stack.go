package stack

import (
	"context"
	"time"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/mig"
)

// Cluster is what the pipeline needs of a cluster: a real one (the
// Kubernetes provider's StackCluster) or the embedded simulated one
// (providers/sim's StackCluster).
type Cluster interface {
	engine.Target
	// Refresh reads the live state of d's stack.
	Refresh(ctx context.Context, d *engine.Desired, opts engine.RefreshOptions) (*engine.Live, error)
	// Lock takes the stack's apply lock for holder, waiting up to wait; a
	// lock held by another run is an *engine.LockHeldError.
	Lock(ctx context.Context, stack, holder string, wait time.Duration) (HeldLock, error)
	// ForceUnlock removes the stack's lock if its ID is id.
	ForceUnlock(ctx context.Context, stack, id string) error
	// GPUPods lists the pods using GPUs on each of the named nodes.
	GPUPods(ctx context.Context, nodes []string) (map[string][]string, error)
	// ApplyUID is Apply that returns the UID of the object written, for
	// the stack's record (engine.Inventory).
	ApplyUID(ctx context.Context, obj *unstructured.Unstructured, force bool) (string, error)
	// ApplyWholeUID is ApplyWhole (a kind owned whole) that returns the
	// UID of the object written.
	ApplyWholeUID(ctx context.Context, obj *unstructured.Unstructured) (string, error)
	// WriteInventory stores inv as the stack's record in
	// engine.LockNamespace (engine.InventoryConfigMaps), then removes its
	// older versions; the next Refresh of the stack reads it back
	// (engine.Live.Inventory). Called under the stack's lock.
	WriteInventory(ctx context.Context, inv *engine.Inventory) error
	// Context names the cluster so that a saved plan can find it again:
	// the kubeconfig context, or SimulatedContextPrefix and the simulated
	// cluster's file.
	Context() string
}

// SimulatedContextPrefix starts the Context of a simulated cluster; the
// absolute path of its file follows.
const SimulatedContextPrefix = "simulated:"

// HeldLock is a stack's apply lock while it is held.
type HeldLock struct {
	// Release gives the lock up; it works even when the run's context was
	// cancelled.
	Release func(context.Context) error
	// ID identifies the lock (for force-unlock).
	ID string
	// Lost is closed when the lock may no longer be held (nil: never).
	Lost <-chan struct{}
	// Err, when set, is nil while this run may write under the lock, else
	// why it may not (a *engine.LockLostError); it is asked before every
	// write.
	Err func() error
	// WritableAt is when this run may read and write under the lock
	// (zero: at once): a lock whose last holder did not release it (a
	// deleted or expired Lease) is only used once that holder must have
	// stopped writing, so that the plan made under it reads a state nobody
	// else changes.
	WritableAt time.Time
}

// Prefetcher is a Cluster that can start reading a stack's objects before
// Refresh asks for them (the Kubernetes provider): Plan calls it once the
// configuration is valid, while it compiles.
type Prefetcher interface {
	Prefetch(ctx context.Context, stack string)
}

// Connect opens the cluster the pipeline works on. cfg is the valid
// configuration, whose cluster block may name the cluster; it is nil when
// no configuration was read (a saved plan).
type Connect func(ctx context.Context, cfg *config.Config) (Cluster, error)

// Using is a Connect that always returns c: for a caller that holds its
// cluster already (a controller).
func Using(c Cluster) Connect {
	return func(context.Context, *config.Config) (Cluster, error) { return c, nil }
}

// Options tune a Stack. Every field may be left zero.
type Options struct {
	// Load holds the inputs of a load besides the files: --var values,
	// --var-file contents and the environment (GPUFORM_VAR_name).
	Load config.Options
	// Catalog is the GPU catalog; nil means mig.Default().
	Catalog *mig.Catalog
	// Diagnostics receives the configuration's diagnostics as the pipeline
	// finds them (load and validation, then capacity), with the
	// configuration whose files they point into (nil when none was read).
	// Errors among them also end the call with an *engine.ConfigError.
	Diagnostics func(cfg *config.Config, diags hcl.Diagnostics)
	// Phase receives how long each phase of a plan took: load, compile,
	// refresh, diff.
	Phase func(name string, elapsed time.Duration)
	// Loaded, when set, is the configuration of the source's own files
	// (ref "") already loaded from their directory with Load's options: a
	// fleet member's, loaded with the whole fleet (config.LoadFleetDir).
	// The first read of ref "" from that directory validates it instead
	// of loading the files again.
	Loaded *config.Config
	// Fleet, when set, receives every member's configuration when the
	// configuration read from a directory is a fleet's listing
	// (config.LoadFleetDir loads them in the same pass), for a caller that
	// goes on over the members.
	Fleet func(members []*config.Config)
}

// Stack is the pipeline of one gpuform stack: the configuration a Source
// holds, and the cluster Connect opens. It loads, validates and compiles
// the configuration once, on first use, and connects once; every method
// then reads the cluster afresh. A Stack is not safe for concurrent use.
type Stack struct {
	src     Source
	connect Connect
	opts    Options

	head    *loaded
	cluster Cluster
	// applied caches the configurations at commits stamped on live
	// objects (drift), by commit.
	applied map[string]appliedEntry
}

// New returns the pipeline over the configuration in src and the cluster
// connect opens. src may be nil for a Stack that only applies saved plans
// (ApplyPlan).
func New(src Source, connect Connect, opts Options) *Stack {
	if opts.Catalog == nil {
		opts.Catalog = mig.Default()
	}
	return &Stack{src: src, connect: connect, opts: opts, applied: map[string]appliedEntry{}}
}

// open returns the cluster, connecting on first use.
func (s *Stack) open(ctx context.Context, cfg *config.Config) (Cluster, error) {
	if s.cluster != nil {
		return s.cluster, nil
	}
	c, err := s.connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.cluster = c
	return c, nil
}

// report passes diagnostics to Options.Diagnostics.
func (s *Stack) report(cfg *config.Config, diags hcl.Diagnostics) {
	if len(diags) > 0 && s.opts.Diagnostics != nil {
		s.opts.Diagnostics(cfg, diags)
	}
}

// phase reports the phase that started at start and returns now.
func (s *Stack) phase(name string, start time.Time) time.Time {
	now := time.Now()
	if s.opts.Phase != nil {
		s.opts.Phase(name, now.Sub(start))
	}
	return now
}
