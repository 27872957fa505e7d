package engine_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// recorder is an in-memory engine.Target that records the order of calls
// and fails the keys it is told to.
type recorder struct {
	mu       sync.Mutex
	started  []engine.Key
	finished map[engine.Key]time.Time
	begun    map[engine.Key]time.Time
	fail     map[engine.Key][]error // errors returned by successive attempts
	calls    map[engine.Key]int
	inFlight int
	maxPar   int
	delay    time.Duration
	onStart  func(engine.Key)
	// probe, when set, answers ProbeEnforced; probes counts its calls.
	probe  func(namespace string, policies []string) error
	probes int
}

func newRecorder() *recorder {
	return &recorder{finished: map[engine.Key]time.Time{}, begun: map[engine.Key]time.Time{}, fail: map[engine.Key][]error{}, calls: map[engine.Key]int{}}
}

func (r *recorder) call(k engine.Key) error {
	r.mu.Lock()
	r.started = append(r.started, k)
	r.begun[k] = time.Now()
	r.inFlight++
	r.maxPar = max(r.maxPar, r.inFlight)
	n := r.calls[k]
	r.calls[k]++
	var err error
	if errs := r.fail[k]; n < len(errs) {
		err = errs[n]
	}
	hook := r.onStart
	r.mu.Unlock()
	if hook != nil {
		hook(k)
	}
	time.Sleep(r.delay)
	r.mu.Lock()
	r.inFlight--
	if err == nil {
		r.finished[k] = time.Now()
	}
	r.mu.Unlock()
	return err
}

func (r *recorder) Apply(_ context.Context, obj *unstructured.Unstructured, _ bool) error {
	return r.call(engine.KeyOf(obj))
}

func (r *recorder) ApplyWhole(_ context.Context, obj *unstructured.Unstructured) error {
	return r.call(engine.KeyOf(obj))
}

func (r *recorder) ApplyNode(_ context.Context, obj *unstructured.Unstructured, _, _ string) error {
	return r.call(engine.KeyOf(obj))
}

func (r *recorder) Delete(_ context.Context, k engine.Key, _ string) error { return r.call(k) }

func (r *recorder) WaitNode(_ context.Context, name, _ string) error {
	return r.call(engine.Key{Kind: "NodeWait", Name: name})
}

func (r *recorder) ProbeEnforced(_ context.Context, namespace string, policies []string) error {
	r.mu.Lock()
	r.probes++
	probe := r.probe
	r.mu.Unlock()
	if probe == nil {
		return nil
	}
	return probe(namespace, policies)
}

func invalid() error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "InferenceService"}, "x", nil)
}

func TestApplyOrderAndParallelism(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	r := newRecorder()
	r.delay = 5 * time.Millisecond
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: 2})
	if !rep.OK() || len(rep.Results) != len(p.Changes) {
		t.Fatalf("report: %d results, ok=%v", len(rep.Results), rep.OK())
	}
	for _, c := range p.Changes {
		for _, dep := range c.DependsOn {
			done, ok := r.finished[dep]
			if !ok {
				continue // not part of this plan
			}
			if r.begun[c.Key].Before(done) {
				t.Errorf("%s started before its dependency %s finished", c.Key, dep)
			}
		}
	}
	if r.maxPar > 2 {
		t.Errorf("%d changes were in flight at once, want at most 2", r.maxPar)
	}
}

func TestApplyFailureSkipsDependentsOnly(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	r := newRecorder()
	serving := engine.Key{Kind: "Namespace", Name: "serving"}
	r.fail[serving] = []error{invalid()}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{})
	if got := r.calls[serving]; got != 1 {
		t.Errorf("a 422 was tried %d times, want 1 (permanent errors are not retried)", got)
	}
	byKey := map[engine.Key]*engine.Result{}
	for _, res := range rep.Results {
		byKey[res.Change.Key] = res
	}
	if byKey[serving].Outcome != engine.OutcomeFailed {
		t.Fatalf("serving namespace: %s", byKey[serving].Outcome)
	}
	for k, res := range byKey {
		inServing := k.Namespace == "serving"
		switch {
		case inServing && res.Outcome != engine.OutcomeSkipped:
			t.Errorf("%s lives in the failed namespace but was %s", k, res.Outcome)
		case !inServing && k != serving && k.Kind != "ValidatingAdmissionPolicyBinding" && k.Kind != "ValidatingAdmissionPolicy" && res.Outcome != engine.OutcomeApplied:
			t.Errorf("%s is independent of the failure but was %s: %v", k, res.Outcome, res.Err)
		}
	}
	if rep.Count(engine.OutcomeApplied)+rep.Count(engine.OutcomeFailed)+rep.Count(engine.OutcomeSkipped) != len(p.Changes) {
		t.Error("the report does not account for every change")
	}
}

func TestApplyRetriesTransientErrors(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	r := newRecorder()
	k := engine.Key{Kind: "Namespace", Name: "research"}
	r.fail[k] = []error{
		apierrors.NewTooManyRequests("slow down", 0),
		apierrors.NewInternalError(errors.New("etcd hiccup")),
		apierrors.NewConflict(schema.GroupResource{Resource: "namespaces"}, "research", errors.New("resourceVersion")),
	}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Retry: engine.Retry{Base: time.Millisecond}})
	if !rep.OK() {
		t.Fatalf("apply failed: %+v", rep.Results)
	}
	if r.calls[k] != 4 {
		t.Errorf("research namespace was tried %d times, want 4", r.calls[k])
	}
	r2 := newRecorder()
	r2.fail[k] = []error{apierrors.NewServiceUnavailable("down"), apierrors.NewServiceUnavailable("down"), apierrors.NewServiceUnavailable("down")}
	rep = engine.Apply(context.Background(), p, r2, engine.ApplyOptions{Retry: engine.Retry{Attempts: 3, Base: time.Millisecond}})
	if rep.OK() || r2.calls[k] != 3 {
		t.Errorf("with 3 attempts against a server that stays down: ok=%v calls=%d", rep.OK(), r2.calls[k])
	}
}

func TestApplyDeletesRankByRank(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	d.Objects = nil
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	r := newRecorder()
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{})
	if !rep.OK() {
		t.Fatal("deletes failed")
	}
	var nsDone time.Time
	for _, k := range r.started {
		if k.Kind == "Namespace" {
			nsDone = r.begun[k]
		}
	}
	for k, fin := range r.finished {
		if k.Namespace != "" && fin.After(nsDone) {
			t.Errorf("%s was deleted after a namespace delete started", k)
		}
	}
	// A failed delete keeps the ranks below it (the namespace) from going.
	r2 := newRecorder()
	isvc := engine.Key{Group: "serving.kserve.io", Kind: "InferenceService", Namespace: "serving", Name: "sentiment"}
	r2.fail[isvc] = []error{apierrors.NewForbidden(schema.GroupResource{Resource: "inferenceservices"}, "sentiment", errors.New("no"))}
	rep = engine.Apply(context.Background(), p, r2, engine.ApplyOptions{})
	for _, res := range rep.Results {
		if res.Change.Key.Kind == "Namespace" && res.Outcome != engine.OutcomeSkipped {
			t.Errorf("%s was %s after a delete above it failed", res.Change.Key, res.Outcome)
		}
	}
}

func TestApplyCancelStopsNewChanges(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	r := newRecorder()
	r.delay = 20 * time.Millisecond
	var once sync.Once
	r.onStart = func(engine.Key) { once.Do(cancel) }
	rep := engine.Apply(ctx, p, r, engine.ApplyOptions{Parallelism: 1})
	if got := rep.Count(engine.OutcomeApplied); got != 1 {
		t.Errorf("applied %d changes after Ctrl-C, want only the one in flight", got)
	}
	if rep.Count(engine.OutcomeSkipped) != len(p.Changes)-1 {
		t.Errorf("skipped %d, want %d", rep.Count(engine.OutcomeSkipped), len(p.Changes)-1)
	}
	for _, res := range rep.Results {
		if res.Outcome == engine.OutcomeSkipped && res.Err == nil {
			t.Errorf("%s skipped without a reason", res.Change.Key)
		}
	}
}

func TestApplyRepartitionsAtMostMaxUnavailable(t *testing.T) {
	p := &engine.Plan{Stack: "s", Throttles: map[string]int{"pool.a": 2}}
	for i := range 6 {
		n := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n" + string(rune('0'+i))}}}
		p.Changes = append(p.Changes, &engine.Change{Address: "pool.a", Key: engine.KeyOf(n), Action: engine.ActionUpdate, After: n, Wait: engine.LabelMIGState, Throttle: "pool.a"})
	}
	r := newRecorder()
	r.delay = 10 * time.Millisecond
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: 10})
	if !rep.OK() {
		t.Fatal("apply failed")
	}
	if r.maxPar > 2 {
		t.Errorf("%d nodes were re-partitioned at once, want at most max_unavailable = 2", r.maxPar)
	}
	if r.calls[engine.Key{Kind: "NodeWait", Name: "n0"}] != 1 {
		t.Error("apply did not wait for the node's MIG state")
	}
}

// TestApplyGoroutinesFollowParallelism: an apply holds goroutines for the
// changes in flight, not one per change waiting for its dependencies (at
// size L that was 47,000 goroutines and some 90 MB of stacks).
func TestApplyGoroutinesFollowParallelism(t *testing.T) {
	d, err := compile.Compile(enginetest.SizeM(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	if len(p.Changes) < 5000 {
		t.Fatalf("the plan has %d changes, want a large one", len(p.Changes))
	}
	const parallelism = 4
	r := newRecorder()
	base := runtime.NumGoroutine()
	var most atomic.Int64
	r.onStart = func(engine.Key) {
		n := int64(runtime.NumGoroutine() - base)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
	}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: parallelism})
	if !rep.OK() || len(rep.Results) != len(p.Changes) {
		t.Fatalf("report: %d results of %d changes, ok=%v", len(rep.Results), len(p.Changes), rep.OK())
	}
	if got := most.Load(); got > 2*parallelism {
		t.Errorf("an apply of %d changes at parallelism %d ran %d goroutines beside the test's, want at most %d", len(p.Changes), parallelism, got, 2*parallelism)
	}
}
