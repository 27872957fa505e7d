package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// bank compiles examples/bank: tenants with admins and priorities, under
// Kueue.
func bank(t *testing.T) *engine.Desired {
	t.Helper()
	d, err := compile.Compile(enginetest.LoadExample(t, "bank"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func isRoleBinding(k engine.Key) bool { return k.Kind == "RoleBinding" }

func isEnforcement(k engine.Key) bool {
	return k.Group == "admissionregistration.k8s.io"
}

// TestAccessWaitsForEnforcement: every RoleBinding of the first apply is
// written after the stack's admission policies, their bindings and its
// tenant's Namespace and ResourceQuota, and only once the probe of its
// namespace said the policies are enforced there.
func TestAccessWaitsForEnforcement(t *testing.T) {
	d := bank(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	if len(p.Policies) == 0 {
		t.Fatal("the bank's plan names no admission policy to prove")
	}
	r := newRecorder()
	r.delay = 2 * time.Millisecond
	// The policies are slow to apply: nothing else may order the
	// RoleBindings after them by chance.
	r.onStart = func(k engine.Key) {
		if isEnforcement(k) {
			time.Sleep(30 * time.Millisecond)
		}
	}
	probed := map[string]time.Time{}
	asked := map[string]bool{}
	r.probe = func(ns string, policies []string) error {
		if len(policies) == 0 {
			t.Errorf("probe of %s asked for no policy", ns)
		}
		r.mu.Lock()
		probed[ns] = time.Now()
		for _, name := range policies {
			asked[name] = true
		}
		r.mu.Unlock()
		return nil
	}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: 8})
	if !rep.OK() {
		t.Fatalf("apply failed: %+v", rep.Results)
	}
	bindings := 0
	for _, c := range p.Changes {
		if !isRoleBinding(c.Key) {
			continue
		}
		bindings++
		began := r.begun[c.Key]
		for _, o := range p.Changes {
			waits := isEnforcement(o.Key) ||
				(o.Key.Namespace == c.Key.Namespace && (o.Key.Kind == "ResourceQuota" || o.Key.Kind == "LocalQueue")) ||
				(o.Key.Kind == "ClusterQueue" && o.Key.Name == c.Key.Namespace) ||
				(o.Key.Kind == "Namespace" && o.Key.Name == c.Key.Namespace)
			if waits && !r.finished[o.Key].Before(began) {
				t.Errorf("%s began before %s was applied", c.Key, o.Key)
			}
		}
		at, ok := probed[c.Key.Namespace]
		if !ok || !at.Before(began) {
			t.Errorf("%s was written without a proof of enforcement in %s first", c.Key, c.Key.Namespace)
		}
	}
	if bindings == 0 {
		t.Fatal("the bank's plan has no RoleBinding")
	}
	if r.probes != len(probed) {
		t.Errorf("%d probes for %d namespaces: the RoleBindings of a namespace share one proof", r.probes, len(probed))
	}
	for _, name := range p.Policies {
		if !asked[name] {
			t.Errorf("no probe asked for policy %s", name)
		}
	}
}

// TestProofWaitsWithoutASlot: a namespace whose policies are not enforced
// yet holds no slot while its proof waits for the next try, so the other
// changes go on meanwhile; here the API server enforces the policies only
// once every change but the RoleBindings was written, at parallelism 1.
func TestProofWaitsWithoutASlot(t *testing.T) {
	d := bank(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	others := 0
	for _, c := range p.Changes {
		if !isRoleBinding(c.Key) {
			others++
		}
	}
	r := newRecorder()
	tries := 0
	r.probe = func(ns string, _ []string) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		tries++
		if len(r.finished) < others {
			return &engine.NotEnforcedError{Policy: "p", Namespace: ns}
		}
		return nil
	}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: 1, EnforceTimeout: 3 * time.Second})
	if !rep.OK() {
		for _, res := range rep.Results {
			if res.Err != nil {
				t.Errorf("%s: %v", res.Change.Key, res.Err)
			}
		}
		t.Fatal("apply failed: a waiting proof kept the only slot from the changes it waited for")
	}
	if tries < 2 {
		t.Errorf("%d probes: the proof never waited", tries)
	}
}

// TestProbesAskEachPolicyOnce: when the policies' bindings match alike, the
// first namespace's probe asks for every policy and each later one for a
// single policy; when they do not, every namespace asks for all.
func TestProbesAskEachPolicyOnce(t *testing.T) {
	for _, alike := range []bool{true, false} {
		t.Run(fmt.Sprintf("alike=%v", alike), func(t *testing.T) {
			d := bank(t)
			if !alike {
				for _, o := range d.Objects {
					if o.Key().Kind == "ValidatingAdmissionPolicyBinding" {
						if err := unstructured.SetNestedField(o.Object.Object, map[string]any{"namespaceSelector": map[string]any{}}, "spec", "matchResources"); err != nil {
							t.Fatal(err)
						}
						break
					}
				}
			}
			p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
			if len(p.Policies) < 2 {
				t.Fatalf("the bank's plan names %d policies, want several", len(p.Policies))
			}
			if p.PoliciesBoundAlike != alike {
				t.Fatalf("PoliciesBoundAlike = %v, want %v", p.PoliciesBoundAlike, alike)
			}
			r := newRecorder()
			var asks []int
			r.probe = func(_ string, policies []string) error {
				asks = append(asks, len(policies))
				return nil
			}
			if rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Parallelism: 1}); !rep.OK() {
				t.Fatalf("apply failed: %+v", rep.Results)
			}
			if len(asks) < 2 {
				t.Fatalf("%d namespaces probed, want several", len(asks))
			}
			for i, n := range asks {
				want := len(p.Policies)
				if alike && i > 0 {
					want = 1
				}
				if n != want {
					t.Errorf("probe %d asked for %d policies, want %d", i, n, want)
				}
			}
		})
	}
}

// TestAccessRefusedWhenNotEnforced: when the API server keeps admitting a
// policy's probe, the RoleBindings fail with the reason and everything
// else is applied.
func TestAccessRefusedWhenNotEnforced(t *testing.T) {
	d := bank(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	r := newRecorder()
	r.probe = func(ns string, policies []string) error {
		return &engine.NotEnforcedError{Policy: policies[0], Namespace: ns}
	}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{EnforceTimeout: 300 * time.Millisecond})
	failed := 0
	for _, res := range rep.Results {
		if !isRoleBinding(res.Change.Key) {
			if res.Outcome != engine.OutcomeApplied {
				t.Errorf("%s: %s (%v), want applied: only access waits for enforcement", res.Change.Key, res.Outcome, res.Err)
			}
			continue
		}
		failed++
		var ne *engine.NotEnforcedError
		if res.Outcome != engine.OutcomeFailed || !errors.As(res.Err, &ne) {
			t.Fatalf("%s: %s (%v), want failed with a NotEnforcedError", res.Change.Key, res.Outcome, res.Err)
		}
		want := "the API server does not enforce policy " + p.Policies[0] + " in namespace " + res.Change.Key.Namespace + " yet: not granting access"
		if !strings.Contains(res.Err.Error(), want) {
			t.Errorf("%s: %q, want it to say %q", res.Change.Key, res.Err, want)
		}
		if _, wrote := r.calls[res.Change.Key]; wrote {
			t.Errorf("%s was written though its namespace is not protected", res.Change.Key)
		}
	}
	if failed == 0 {
		t.Fatal("no RoleBinding in the plan")
	}
	if r.probes < 2*failed/3 {
		t.Errorf("%d probes: the walk did not retry within the timeout", r.probes)
	}
}

// TestAccessProbedOnlyWhenGranted: an update of a RoleBinding that adds a
// subject is proved first; one that only removes a subject, or any other
// kind, is not.
func TestAccessProbedOnlyWhenGranted(t *testing.T) {
	rb := func(subjects ...string) map[string]any {
		subs := make([]any, len(subjects))
		for i, s := range subjects {
			subs[i] = map[string]any{"kind": "User", "name": s}
		}
		u := stackObject("rbac.authorization.k8s.io/v1", "RoleBinding", "a", "gpuform-admins")
		u.Object["subjects"] = subs
		return u.Object
	}
	key := engine.Key{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "a", Name: "gpuform-admins"}
	tests := []struct {
		name          string
		action        engine.Action
		before, after []string
		want          bool
	}{
		{"create", engine.ActionCreate, nil, []string{"alice"}, true},
		{"adopt", engine.ActionAdopt, []string{"alice"}, []string{"alice"}, true},
		{"adds a subject", engine.ActionUpdate, []string{"alice"}, []string{"alice", "bob"}, true},
		{"replaces a subject", engine.ActionUpdate, []string{"alice"}, []string{"bob"}, true},
		{"removes a subject", engine.ActionUpdate, []string{"alice", "bob"}, []string{"alice"}, false},
		{"same subjects", engine.ActionUpdate, []string{"alice"}, []string{"alice"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &engine.Change{Key: key, APIVersion: "rbac.authorization.k8s.io/v1", Action: tt.action}
			c.After = stackObject("", "", "", "")
			c.After.Object = rb(tt.after...)
			if tt.before != nil {
				c.Before = stackObject("", "", "", "")
				c.Before.Object = rb(tt.before...)
			}
			p := &engine.Plan{Stack: "s", Changes: []*engine.Change{c}, Policies: []string{"gpuform-s-priorities"}}
			r := newRecorder()
			r.probe = func(ns string, _ []string) error {
				return &engine.NotEnforcedError{Policy: "gpuform-s-priorities", Namespace: ns}
			}
			rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{EnforceTimeout: 100 * time.Millisecond})
			if got := r.probes > 0; got != tt.want {
				t.Errorf("probed = %v, want %v", got, tt.want)
			}
			if ok := rep.OK(); ok == tt.want {
				t.Errorf("applied = %v with the policy not enforced, want %v", ok, !tt.want)
			}
		})
	}
}

// TestSavedPlanKeepsPolicies: a saved plan carries the stack's policies, so
// that applying it proves them enforced as applying the plan would.
func TestSavedPlanKeepsPolicies(t *testing.T) {
	p := enginetest.MustDiff(t, bank(t), enginetest.EmptyLive(t), engine.DiffOptions{})
	pf, err := engine.NewPlanFile(p, "test", "hash", "ctx", true)
	if err != nil {
		t.Fatal(err)
	}
	got := pf.Plan().Policies
	if len(got) == 0 || strings.Join(got, ",") != strings.Join(p.Policies, ",") {
		t.Errorf("saved plan's policies %v, want %v", got, p.Policies)
	}
}
