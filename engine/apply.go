package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/dag"
	"github.com/gpuform/gpuform/engine/kinds"
)

// Target is what Apply needs from a provider.
type Target interface {
	// Apply writes obj with server-side apply; force takes over fields of
	// other managers.
	Apply(ctx context.Context, obj *unstructured.Unstructured, force bool) error
	// ApplyWhole writes obj, of a kind owned whole
	// (kinds.Entry.OwnedWhole), so that the object is obj whole: as
	// Apply with force, then without every field another field manager
	// set that obj does not (ForeignPaths), which server-side apply
	// never removes.
	ApplyWhole(ctx context.Context, obj *unstructured.Unstructured) error
	// ApplyNode sets gpuform's labels and annotations on an existing Node
	// last seen at resourceVersion; it never creates one, and fails when
	// the node is gone.
	// fieldManager is the stack's node field manager (NodeFieldManager).
	ApplyNode(ctx context.Context, obj *unstructured.Unstructured, resourceVersion, fieldManager string) error
	// Delete removes an object with foreground propagation.
	Delete(ctx context.Context, k Key, apiVersion string) error
	// WaitNode waits until the node's label or annotation key (a MIG state)
	// is "success"; "failed..." or "reboot-required" end it with an error.
	WaitNode(ctx context.Context, name, key string) error
	// ProbeEnforced asks the API server, by a server-side dry-run create
	// of a ConfigMap labelled LabelAdmissionProbe (which writes nothing),
	// whether it enforces each named ValidatingAdmissionPolicy in
	// namespace, and whether the stack's ResourceQuota there is in force
	// (its status computed): nil when every policy denied its probe and
	// the quota is in force, a *NotEnforcedError naming what is not, else
	// the request's error.
	ProbeEnforced(ctx context.Context, namespace string, policies []string) error
}

// Outcome is how one change of an apply ended.
type Outcome string

// Outcomes of a change.
const (
	OutcomeApplied Outcome = "applied"
	OutcomeFailed  Outcome = "failed"
	OutcomeSkipped Outcome = "skipped"
)

// Result is the end of one change.
type Result struct {
	Change  *Change
	Outcome Outcome
	// Err is the failure, or for a skip, why it was skipped.
	Err      error
	Elapsed  time.Duration
	Attempts int
}

// Report is the account of an apply.
type Report struct {
	// Results has the end of every change but conflicts, in plan order.
	Results []*Result
	// Refused, when set, is why the apply wrote nothing at all: its
	// changes depend on each other in a cycle (a *DependencyCycleError).
	// Every change is then skipped with it.
	Refused error
}

// Count returns how many changes ended with outcome o.
func (r *Report) Count(o Outcome) int {
	n := 0
	for _, res := range r.Results {
		if res.Outcome == o {
			n++
		}
	}
	return n
}

// OK reports whether every change was applied.
func (r *Report) OK() bool { return r.Count(OutcomeApplied) == len(r.Results) }

// EventKind says what an apply event reports.
type EventKind int

// Event kinds.
const (
	EventStart EventKind = iota
	EventDone
)

// Event is a progress notification: a change started or ended.
type Event struct {
	Kind   EventKind
	Result *Result // for EventDone
	Change *Change
	// Done and Total count finished changes.
	Done, Total int
}

// Retry bounds retries of transient errors.
type Retry struct {
	// Attempts is the most tries per change; zero means 6.
	Attempts int
	// Base is the first backoff; zero means 200ms. Each retry doubles it,
	// with up to 50% jitter, capped at Max (zero means 10s). A Retry-After
	// from the server is honoured.
	Base, Max time.Duration
}

// DefaultParallelism is how many changes apply keeps in flight unless told
// otherwise. Requests are bounded by concurrency, not by a client-side rate:
// the API server's Priority and Fairness answers 429 with Retry-After when
// it is saturated, which apply honours. Enough are in flight to keep a
// small API server's cores busy rather than waiting on round trips.
const DefaultParallelism = 16

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// Parallelism bounds the changes in flight; zero means DefaultParallelism.
	Parallelism int
	// Progress, when set, is called (serialised) as changes start and end.
	Progress func(Event)
	Retry    Retry
	// RequestTimeout bounds each attempt; zero means 60s.
	RequestTimeout time.Duration
	// MIGTimeout bounds the wait for one node's MIG re-partitioning; zero
	// means 15 minutes.
	MIGTimeout time.Duration
	// InterruptGrace is how long a request in flight may still run after
	// ctx is cancelled (Ctrl-C, --timeout) before it is cut; zero means
	// 500ms.
	InterruptGrace time.Duration
	// MaxFailuresInARow stops the apply (no new change starts) when this
	// many changes in a row failed on transient errors after all their
	// retries: the API server is gone or overloaded, and trying every
	// remaining change would only take longer. Zero means 3.
	MaxFailuresInARow int
	// Kinds is the registry of kinds whose ranks order the deletes; nil
	// means kinds.Builtin().
	Kinds *kinds.Registry
	// Fence, when set, is asked before every write (each try of each
	// change): an error (a *LockLostError: the stack's lock may no longer
	// be this run's) stops the apply as a cancelled ctx would, with the
	// error as its cause, and requests in flight are cut at once rather
	// than after InterruptGrace.
	Fence func() error
	// EnforceTimeout bounds the wait for the API server to enforce the
	// stack's admission policies and quota in a namespace before a
	// RoleBinding that grants access there is written: a namespace gives
	// up once no namespace was proven for that long; zero means
	// DefaultEnforceTimeout.
	EnforceTimeout time.Duration
}

// Apply executes the plan against t: a change starts when every change it
// depends on was applied; dependents of a failed change are skipped while
// independent branches go on; deletes run after the applies, in reverse
// dependency order, rank by rank. Transient errors are retried with backoff.
// Cancelling ctx stops new changes from starting; changes in flight finish.
// A plan whose changes depend on each other in a cycle is refused before
// anything is written: the report's Refused says why, and every change is
// skipped.
func Apply(ctx context.Context, p *Plan, t Target, opts ApplyOptions) *Report {
	opts = opts.withDefaults()
	w := newWalk(p, opts.Kinds)
	if _, err := w.graph.Sort(); err != nil {
		return w.refuse(cycleError(err, (*job).key))
	}
	ctx, trip := context.WithCancelCause(ctx)
	defer trip(nil)
	ex := &executor{trip: trip, t: t, opts: opts, sem: make(chan struct{}, opts.Parallelism), nodeManager: NodeFieldManager(p.Stack), throttles: map[string]chan struct{}{}, total: len(w.changes)}
	for group, n := range p.Throttles {
		ex.throttles[group] = make(chan struct{}, n)
	}
	ex.prover = &prover{t: t, sem: ex.sem, policies: p.Policies, boundAlike: p.PoliciesBoundAlike, timeout: opts.EnforceTimeout, byNS: map[string]*proof{}, proven: map[string]bool{}, progress: time.Now()}
	ex.walk(ctx, w.graph)
	rep := &Report{}
	for _, j := range w.changes {
		rep.Results = append(rep.Results, j.result)
	}
	return rep
}

// walk runs every job of g, each once the jobs it depends on ended, on
// opts.Parallelism goroutines (plus one): a job is handed to them only when
// it is ready, so a large apply holds a few dozen goroutines, not one
// waiting, with its stack, per change (a job waiting for its namespace's
// proof of enforcement is parked by the prover, which hands it back).
func (ex *executor) walk(ctx context.Context, g *dag.Graph[*job]) {
	nodes := g.Nodes()
	dependents := make(map[*job][]*job, len(nodes))
	for _, j := range nodes {
		j.deps = g.DependsOn(j)
		j.waiting.Store(int32(len(j.deps)))
		for _, d := range j.deps {
			dependents[d] = append(dependents[d], j)
		}
	}
	// A job is in the buffer at most once at a time (the prover sends one
	// again only after it was taken), so the buffer never blocks a sender.
	ready := make(chan *job, len(nodes))
	for _, j := range nodes {
		if len(j.deps) == 0 {
			ready <- j
		}
	}
	var left atomic.Int64
	left.Store(int64(len(nodes)))
	if len(nodes) == 0 {
		close(ready)
	}
	var wg sync.WaitGroup
	// One more than the semaphore's slots: while every slot holds a change
	// in flight, one more job is taken, so a skipped change or a barrier
	// ends at once (a change taken waits for a slot, as it always did).
	for range ex.opts.Parallelism + 1 {
		wg.Go(func() {
			for j := range ready {
				if ex.awaitProof(ctx, j, ready) {
					continue
				}
				ex.run(ctx, j)
				for _, dj := range dependents[j] {
					if dj.waiting.Add(-1) == 0 {
						ready <- dj
					}
				}
				if left.Add(-1) == 0 {
					close(ready)
				}
			}
		})
	}
	wg.Wait()
}

// awaitProof reports whether j waits for the proof that its namespace
// enforces the stack's policies (prover.await): only a job that grants
// access and will run, its dependencies having succeeded.
func (ex *executor) awaitProof(ctx context.Context, j *job, ready chan<- *job) bool {
	if j.barrier || !grantsAccess(j.c) {
		return false
	}
	for _, d := range j.deps {
		if !d.succeeded() {
			return false
		}
	}
	return ex.prover.await(ctx, j, ready)
}

// withDefaults fills in the zero options.
func (o ApplyOptions) withDefaults() ApplyOptions {
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultParallelism
	}
	if o.MIGTimeout <= 0 {
		o.MIGTimeout = 15 * time.Minute
	}
	if o.InterruptGrace <= 0 {
		o.InterruptGrace = 500 * time.Millisecond
	}
	if o.MaxFailuresInARow <= 0 {
		o.MaxFailuresInARow = 3
	}
	if o.Kinds == nil {
		o.Kinds = kinds.Builtin()
	}
	if o.EnforceTimeout <= 0 {
		o.EnforceTimeout = DefaultEnforceTimeout
	}
	return o
}

// walk is the dependency graph of an apply: a job per change to make
// (conflicts are never made) and the barriers that run the deletes after
// the applies, rank by rank.
type walk struct {
	graph *dag.Graph[*job]
	// changes are the jobs of changes, in the plan's order.
	changes []*job
}

// newWalk builds the graph of p's changes. An apply depends on the applies
// of the keys in its DependsOn; every delete waits for a barrier that ends
// when the applies and the deletes of every rank above it (reg's ranks)
// ended.
func newWalk(p *Plan, reg *kinds.Registry) *walk {
	w := &walk{graph: dag.New[*job](len(p.Changes) + 1)}
	byKey := map[Key]*job{}
	var applies, deletes []*job
	for _, c := range p.Changes {
		if c.Action == ActionConflict {
			continue
		}
		j := &job{c: c}
		w.changes = append(w.changes, j)
		w.graph.Add(j)
		if c.Action == ActionDelete {
			deletes = append(deletes, j)
		} else {
			applies = append(applies, j)
			byKey[c.Key] = j
		}
	}
	for _, j := range applies {
		for _, d := range j.c.DependsOn {
			if dj, ok := byKey[d]; ok {
				w.graph.AddEdge(j, dj)
			}
		}
	}
	accessAfterEnforcement(w.graph, applies, reg)
	// Deletes run rank by rank, highest first, after every apply ended: a
	// barrier per rank ends when the deletes of the ranks above it ended.
	rank := func(j *job) int { return reg.Rank(groupKind(j.c.Key)) }
	barrier := &job{barrier: true}
	for _, j := range applies {
		w.graph.AddEdge(barrier, j)
	}
	sort.SliceStable(deletes, func(a, b int) bool { return rank(deletes[a]) > rank(deletes[b]) })
	var rankJobs []*job
	prev := barrier
	for i, j := range deletes {
		if i > 0 && rank(j) != rank(deletes[i-1]) {
			next := &job{barrier: true}
			w.graph.AddEdge(next, prev)
			for _, rj := range rankJobs {
				w.graph.AddEdge(next, rj)
			}
			prev, rankJobs = next, nil
		}
		w.graph.AddEdge(j, prev)
		rankJobs = append(rankJobs, j)
	}
	w.graph.Add(barrier)
	return w
}

// refuse is the report of an apply refused before it began: every change
// skipped because of err.
func (w *walk) refuse(err error) *Report {
	rep := &Report{Refused: err}
	for _, j := range w.changes {
		rep.Results = append(rep.Results, &Result{Change: j.c, Outcome: OutcomeSkipped, Err: err})
	}
	return rep
}

// job is one node of an apply's walk: a change, or a barrier that ends when
// what it depends on ended.
type job struct {
	c    *Change
	deps []*job
	// waiting counts the deps that have not ended yet: the walk runs the
	// job once it is 0, so run reads the deps' results as they ended.
	waiting atomic.Int32
	result  *Result
	barrier bool
	// failed is set on a barrier when a delete above it did not succeed.
	failed bool
}

type executor struct {
	t           Target
	nodeManager string
	throttles   map[string]chan struct{}
	opts        ApplyOptions
	sem         chan struct{}
	mu          sync.Mutex
	done        int
	total       int
	// failedInARow counts changes that failed on transient errors since
	// the last success; trip stops the apply when it reaches the limit.
	failedInARow int
	trip         context.CancelCauseFunc
	// prover proves the stack's policies enforced before access is granted.
	prover *prover
}

// ErrInterrupted is why changes not started before cancellation were skipped.
var ErrInterrupted = errors.New("interrupted before it started")

// ServerFailingError is why changes were not started after
// ApplyOptions.MaxFailuresInARow changes in a row failed on transient
// errors.
type ServerFailingError struct {
	// Failures is how many changes failed in a row; Last is the last error.
	Failures int
	Last     error
}

// Error says why the change was not started.
func (e *ServerFailingError) Error() string {
	return fmt.Sprintf("not started: %d changes in a row failed after all their retries, so the API server looks unavailable (last error: %v)", e.Failures, e.Last)
}

// RunTimeoutError is the cause of a run's context when the run's own
// deadline (--timeout) ran out; it is a context.DeadlineExceeded to
// errors.Is.
type RunTimeoutError struct{ Limit time.Duration }

// Error names the limit that ran out.
func (e *RunTimeoutError) Error() string {
	return fmt.Sprintf("the run exceeded --timeout %s", e.Limit)
}

// Unwrap makes the timeout a context.DeadlineExceeded.
func (e *RunTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// notStarted is why a change was skipped because ctx ended: the server
// failing, or an interruption and its cause (a signal, --timeout).
func notStarted(ctx context.Context) error {
	cause := context.Cause(ctx)
	var sf *ServerFailingError
	switch {
	case errors.As(cause, &sf):
		return sf
	case cause == nil || cause == context.Canceled:
		return ErrInterrupted
	}
	return fmt.Errorf("%w (%v)", ErrInterrupted, cause)
}

// run makes j's change, or ends its barrier; the walk calls it once every
// job j depends on ended.
func (ex *executor) run(ctx context.Context, j *job) {
	if j.barrier {
		// The barrier after the applies never fails; a rank barrier fails
		// when a delete (or barrier) above it did not succeed.
		for _, d := range j.deps {
			if (d.barrier && d.failed) || (!d.barrier && d.c.Action == ActionDelete && !d.succeeded()) {
				j.failed = true
			}
		}
		return
	}
	var blocker *job
	for _, d := range j.deps {
		if blocker == nil && !d.succeeded() {
			blocker = d
		}
	}
	if blocker != nil {
		why := "a delete it must follow did not succeed"
		if blocker.c != nil {
			why = fmt.Sprintf("it depends on %s, which was %s", blocker.c.Key, blocker.result.Outcome)
		}
		j.result = &Result{Change: j.c, Outcome: OutcomeSkipped, Err: errors.New(why)}
		ex.finish(j.result)
		return
	}
	if grantsAccess(j.c) {
		if err := ex.prover.result(j.c.Key.Namespace); err != nil {
			j.result = &Result{Change: j.c, Outcome: OutcomeFailed, Err: err}
			if ctx.Err() != nil {
				j.result.Outcome, j.result.Err = OutcomeSkipped, notStarted(ctx)
			}
			ex.finish(j.result)
			return
		}
	}
	select {
	case ex.sem <- struct{}{}:
	case <-ctx.Done():
		j.result = &Result{Change: j.c, Outcome: OutcomeSkipped, Err: notStarted(ctx)}
		ex.finish(j.result)
		return
	}
	defer func() { <-ex.sem }()
	if ctx.Err() != nil || ex.fenced() {
		j.result = &Result{Change: j.c, Outcome: OutcomeSkipped, Err: notStarted(ctx)}
		ex.finish(j.result)
		return
	}
	if th := ex.throttles[j.c.Throttle]; th != nil && j.c.Wait != "" {
		select {
		case th <- struct{}{}:
		case <-ctx.Done():
			j.result = &Result{Change: j.c, Outcome: OutcomeSkipped, Err: notStarted(ctx)}
			ex.finish(j.result)
			return
		}
		defer func() { <-th }()
	}
	ex.event(Event{Kind: EventStart, Change: j.c})
	start := time.Now()
	attempts, err := ex.withRetry(ctx, func(actx context.Context) error { return ex.do(actx, j.c) })
	if err == nil && j.c.Wait != "" {
		wctx, cancel := context.WithTimeout(ctx, ex.opts.MIGTimeout)
		err = ex.t.WaitNode(wctx, j.c.Key.Name, j.c.Wait)
		cancel()
	}
	j.result = &Result{Change: j.c, Outcome: OutcomeApplied, Elapsed: time.Since(start), Attempts: attempts}
	if err != nil {
		j.result.Outcome, j.result.Err = OutcomeFailed, hideSensitive(j.c, err)
	}
	ex.finish(j.result)
}

// key is the key of the job's change (the zero key for a barrier).
func (j *job) key() Key {
	if j.c == nil {
		return Key{}
	}
	return j.c.Key
}

// succeeded reports whether the job's change was applied, or for a
// barrier, whether every delete above it succeeded.
func (j *job) succeeded() bool {
	if j.barrier {
		return !j.failed
	}
	return j.result != nil && j.result.Outcome == OutcomeApplied
}

// fenced asks the fence whether this run may still write; when it may not,
// the apply stops with the fence's error as its cause.
func (ex *executor) fenced() bool {
	if ex.opts.Fence == nil {
		return false
	}
	if err := ex.opts.Fence(); err != nil {
		ex.trip(err)
		return true
	}
	return false
}

func (ex *executor) finish(r *Result) {
	ex.mu.Lock()
	ex.done++
	switch {
	case r.Outcome == OutcomeApplied:
		ex.failedInARow = 0
	case r.Outcome == OutcomeFailed && Transient(r.Err):
		ex.failedInARow++
		if ex.failedInARow >= ex.opts.MaxFailuresInARow {
			ex.trip(&ServerFailingError{Failures: ex.failedInARow, Last: r.Err})
		}
	}
	ev := Event{Kind: EventDone, Result: r, Change: r.Change, Done: ex.done, Total: ex.total}
	ex.mu.Unlock()
	ex.event(ev)
}

func (ex *executor) event(ev Event) {
	if ex.opts.Progress == nil {
		return
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ev.Total == 0 {
		ev.Done, ev.Total = ex.done, ex.total
	}
	ex.opts.Progress(ev)
}

// do performs one change. In-flight requests are not cancelled by ctx
// (Ctrl-C lets them finish), only bounded by the request timeout.
func (ex *executor) do(ctx context.Context, c *Change) error {
	switch c.Action {
	case ActionCreate, ActionUpdate, ActionAdopt:
		if c.Key.Kind == "Node" && c.Key.Group == "" {
			rv := ""
			if c.Before != nil {
				rv = c.Before.GetResourceVersion()
			}
			obj := c.After
			if c.Wait != "" {
				obj = withPendingState(obj, c.Wait)
			}
			return ex.t.ApplyNode(ctx, obj, rv, ex.nodeManager)
		}
		if ex.opts.Kinds.OwnedWhole(groupKind(c.Key)) {
			return ex.t.ApplyWhole(ctx, c.After)
		}
		return ex.t.Apply(ctx, c.After, true)
	case ActionDelete:
		err := ex.t.Delete(ctx, c.Key, c.APIVersion)
		if apierrors.IsNotFound(err) {
			return nil // already gone: the desired end state
		}
		return err
	}
	return fmt.Errorf("cannot apply a %s", c.Action)
}

// withPendingState marks a node's MIG state "pending" in the object gpuform
// applies, so that a "success" left from the previous layout is not taken
// for the new one; mig-manager or the agent takes the field over.
func withPendingState(n *unstructured.Unstructured, key string) *unstructured.Unstructured {
	n = n.DeepCopy()
	get, set := n.GetLabels, n.SetLabels
	if key == agentv1.AnnotMIGState {
		get, set = n.GetAnnotations, n.SetAnnotations
	}
	m := get()
	if m == nil {
		m = map[string]string{}
	}
	m[key] = "pending"
	set(m)
	return n
}
