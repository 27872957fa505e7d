// Package stack is gpuform's library entry point: the pipeline behind
// plan, apply, drift and the pull request preview, for a CI system or a
// controller that drives gpuform without its command line.
//
// A Stack joins a Source of configurations (a directory, or a directory
// of a git repository at a ref: providers/git), a Connect that opens the
// cluster (the Kubernetes provider or the simulated one; a Cluster is
// declared here with what the pipeline needs of it) and Options. Its
// methods own every step:
//
//	load -> validate -> compile -> refresh -> diff -> assess (capacity, disruption) -> apply
//
// Plan stops before apply; Apply takes the stack's lock and applies; Drift
// classifies how the cluster differs from the configuration, reading the
// configurations at the commits stamped on live objects; Fix applies to
// remove drift; Preview compares the configuration with the one at a base
// ref (a pull request). Nothing is printed: diagnostics, timings and
// progress go to the hooks in Options and ApplyOptions, and refusals are
// typed errors (*engine.ConfigError, *engine.ConflictError, *engine.UnsafeError, ...).
//
// A minimal use, planning and applying a directory on a Kubernetes
// cluster:
//
//	target, err := kubernetes.Resolve(kubernetes.ConnectionOptions{Env: os.Environ()})
//	if err != nil {
//		return err
//	}
//	client, err := kubernetes.NewClient(target, kubernetes.Options{})
//	if err != nil {
//		return err
//	}
//	st := stack.New(stack.Dir("infra/gpus"), stack.Using(kubernetes.StackCluster(client)), stack.Options{})
//	res, err := st.Plan(ctx, stack.PlanOptions{})
//	if err != nil {
//		return err
//	}
//	if res.Plan.HasChanges() {
//		applied, err := st.Apply(ctx, stack.ApplyOptions{Safety: engine.SafetyOptions{MaxDeletes: 10}})
//		...
//	}
//
// The package imports no provider: the caller opens the cluster and
// passes it in.
package stack
