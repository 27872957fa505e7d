package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/dag"
	"github.com/gpuform/gpuform/engine/kinds"
)

// Enforcement before access: a tenant's RoleBindings are written only once
// the API server enforces the stack's admission policies in the tenant's
// namespace. The walk makes every RoleBinding wait for the stack's policy
// and binding changes, and before it writes one that grants a subject
// access (a create, an adoption, an update that adds a subject) it proves
// each policy enforced there: a server-side dry-run create of a ConfigMap
// labelled LabelAdmissionProbe, which every policy of the stack denies
// (compile's namespacePolicy). The API server's policy informer syncs
// asynchronously, so a policy just created is enforced only a moment later.

// AdmissionProbeMessage is in the message of every denial of an admission
// probe, with the policy's name.
const AdmissionProbeMessage = "gpuform admission probe"

// DefaultEnforceTimeout is how long apply waits, with no namespace proven
// meanwhile, for the API server to enforce the stack's policies and quota
// in a namespace before it refuses to grant access there.
const DefaultEnforceTimeout = 30 * time.Second

// NotEnforcedError is why a tenant's RoleBinding was not written: the API
// server admitted the admission probe of Policy in Namespace (a dry run,
// which writes nothing), so the policy does not yet protect that namespace.
type NotEnforcedError struct {
	Policy, Namespace string
	// Waited is how long apply tried before it gave up (zero for one try).
	Waited time.Duration
}

// Error names the policy and the namespace.
func (e *NotEnforcedError) Error() string {
	msg := fmt.Sprintf("the API server does not enforce policy %s in namespace %s yet: not granting access", e.Policy, e.Namespace)
	if e.Waited > 0 {
		msg += fmt.Sprintf(" (it admitted the policy's dry-run probe for %s; check that the policy and its binding exist unchanged, then run apply again)", e.Waited.Round(time.Second))
	}
	return msg
}

var (
	kindVAP         = KeyFor(KindVAP, "", "")
	kindVAPBinding  = KeyFor(KindVAPBinding, "", "")
	kindRoleBinding = KeyFor(KindRoleBinding, "", "")
)

// sameKind reports whether k is of the kind of kind (a Key with only its
// group and kind set).
func sameKind(k, kind Key) bool { return k.Group == kind.Group && k.Kind == kind.Kind }

// enforces reports whether a change of k makes the stack's admission
// policies what they are: a validating or mutating policy or a binding.
func enforces(k Key) bool { return k.Group == kindVAP.Group }

// StackPolicies returns the names of the ValidatingAdmissionPolicies d
// wants, sorted: those a tenant's access waits for (Plan.Policies); and
// whether their bindings all match the same requests (the same
// matchResources), so that a namespace where the API server enforces one
// of them, once each was seen enforced, is one where it enforces all.
func StackPolicies(d *Desired) (names []string, boundAlike bool) {
	var matches []any
	for _, o := range d.Objects {
		k := o.Key()
		switch {
		case sameKind(k, kindVAP):
			names = append(names, k.Name)
		case sameKind(k, kindVAPBinding):
			m, _, _ := unstructured.NestedFieldNoCopy(o.Object.Object, "spec", "matchResources")
			matches = append(matches, m)
		}
	}
	boundAlike = true
	for _, m := range matches {
		boundAlike = boundAlike && equality.Semantic.DeepEqual(matches[0], m)
	}
	sort.Strings(names)
	return names, boundAlike
}

// grantsAccess reports whether c gives a subject access through a
// RoleBinding: its creation or adoption, or an update that adds a subject.
func grantsAccess(c *Change) bool {
	if !sameKind(c.Key, kindRoleBinding) {
		return false
	}
	switch c.Action {
	case ActionCreate, ActionAdopt:
		return true
	case ActionUpdate:
		if c.Before == nil {
			return true
		}
		before := map[string]bool{}
		for _, s := range subjectsOf(c.Before) {
			before[s] = true
		}
		for _, s := range subjectsOf(c.After) {
			if !before[s] {
				return true
			}
		}
	}
	return false
}

// subjectsOf are a RoleBinding's subjects as kind/namespace/name.
func subjectsOf(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "subjects")
	out := make([]string, 0, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		kind, _ := m["kind"].(string)
		ns, _ := m["namespace"].(string)
		name, _ := m["name"].(string)
		out = append(out, kind+"/"+ns+"/"+name)
	}
	return out
}

// prover proves the stack's policies enforced, once per namespace for an
// apply: the RoleBindings of a namespace share one proof. When the
// policies' bindings match alike (Plan.PoliciesBoundAlike), a namespace
// probes only the policies no namespace has proven yet, or the first one
// when all were: the API server enforces a policy it was seen enforcing
// wherever its binding matches, and a binding's match of a namespace,
// which one probe shows, is every binding's.
//
// A proof waits between its tries (the API server's policy informer and
// quota controller catch up a moment after the writes), and no waiting
// holds one of the walk's goroutines or one of its slots: a try is made by
// the walk's goroutine that took a job of the namespace, and the next try
// is that job handed back to the walk by a timer.
type prover struct {
	t Target
	// sem is the apply's slots for requests in flight: a probe holds one
	// while it asks.
	sem        chan struct{}
	policies   []string
	boundAlike bool
	timeout    time.Duration
	mu         sync.Mutex
	byNS       map[string]*proof
	// proven are the policies seen enforced in some namespace.
	proven map[string]bool
	// progress is when the apply began, or the last proof ended enforced:
	// a proof gives up once nothing was proven for the timeout, so a
	// large apply waits as long as the API server's quota controller
	// keeps up, and one that proves nothing stops after the timeout.
	progress time.Time
}

// proof is where the proof of one namespace stands.
type proof struct {
	// done is set once the proof ended, with err its outcome.
	done bool
	err  error
	// asking is set while a try is in flight or its timer runs.
	asking bool
	start  time.Time
	delay  time.Duration
	// parked are the namespace's jobs taken while asking, handed back to
	// the walk when the proof ends.
	parked []*job
}

// await takes j, a job that grants access in its namespace, from the walk:
// false when the namespace's proof ended (run reads it with result); true
// when j waits for it, to be handed back to ready at its next try or once
// it ended.
func (p *prover) await(ctx context.Context, j *job, ready chan<- *job) bool {
	namespace := j.c.Key.Namespace
	p.mu.Lock()
	pr := p.byNS[namespace]
	if pr == nil {
		pr = &proof{start: time.Now(), delay: 50 * time.Millisecond}
		p.byNS[namespace] = pr
	}
	switch {
	case pr.done:
		p.mu.Unlock()
		return false
	case pr.asking:
		pr.parked = append(pr.parked, j)
		p.mu.Unlock()
		return true
	}
	pr.asking = true
	p.mu.Unlock()

	err := p.probe(ctx, namespace)
	var ne *NotEnforcedError
	if err != nil && (errors.As(err, &ne) || Transient(err)) && ctx.Err() == nil && p.waitMore(pr) {
		p.again(ctx, pr, j, ready)
		return true
	}
	switch {
	case err == nil:
	case ne != nil:
		ne.Waited = time.Since(pr.start)
	default:
		err = fmt.Errorf("prove the stack's admission policies enforced in namespace %s: %w", namespace, err)
	}
	p.mu.Lock()
	if err == nil {
		p.progress = time.Now()
	}
	pr.done, pr.err, pr.asking = true, err, false
	parked := pr.parked
	pr.parked = nil
	p.mu.Unlock()
	for _, pj := range parked {
		ready <- pj
	}
	return false
}

// waitMore reports whether pr's proof tries again after its delay: until
// nothing was proven, in its namespace since it began or in any since the
// last proof, for the timeout.
func (p *prover) waitMore(pr *proof) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	since := pr.start
	if p.progress.After(since) {
		since = p.progress
	}
	return time.Since(since)+pr.delay < p.timeout
}

// again hands j back to ready after the proof's delay, or at once when ctx
// ends first, and doubles the delay up to two seconds.
func (p *prover) again(ctx context.Context, pr *proof, j *job, ready chan<- *job) {
	p.mu.Lock()
	delay := pr.delay
	pr.delay = min(2*delay, 2*time.Second)
	p.mu.Unlock()
	var stop func() bool
	back := func() {
		stop()
		p.mu.Lock()
		pr.asking = false
		p.mu.Unlock()
		ready <- j
	}
	timer := time.AfterFunc(delay, back)
	stop = context.AfterFunc(ctx, func() {
		if timer.Stop() {
			back()
		}
	})
}

// result is the outcome of namespace's proof: an error unless it ended
// with every policy enforced.
func (p *prover) result(namespace string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.byNS[namespace]
	if pr == nil || !pr.done {
		return fmt.Errorf("the stack's admission policies were not proven enforced in namespace %s", namespace)
	}
	return pr.err
}

// toProbe returns the policies a namespace's probe asks about.
func (p *prover) toProbe() []string {
	if !p.boundAlike || len(p.policies) == 0 {
		return p.policies
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, name := range p.policies {
		if !p.proven[name] {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return p.policies[:1]
	}
	return out
}

// probe asks the target once, holding one of the apply's slots, about the
// policies toProbe names then, and records them proven when it may.
func (p *prover) probe(ctx context.Context, namespace string) error {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.sem }()
	policies := p.toProbe()
	if err := p.t.ProbeEnforced(ctx, namespace, policies); err != nil {
		return err
	}
	p.mu.Lock()
	for _, name := range policies {
		p.proven[name] = true
	}
	p.mu.Unlock()
	return nil
}

// accessAfterEnforcement makes each RoleBinding of applies wait for the
// applies of the stack's admission policies and bindings, and for those of
// its own block (its tenant) whose kinds rank before RoleBinding in reg:
// the tenant's quota and scheduler queues.
func accessAfterEnforcement(g *dag.Graph[*job], applies []*job, reg *kinds.Registry) {
	var enforcement []*job
	byAddress := map[string][]*job{}
	for _, j := range applies {
		if enforces(j.c.Key) {
			enforcement = append(enforcement, j)
		}
		byAddress[j.c.Address] = append(byAddress[j.c.Address], j)
	}
	access := reg.Rank(groupKind(kindRoleBinding))
	for _, j := range applies {
		if !sameKind(j.c.Key, kindRoleBinding) {
			continue
		}
		for _, ej := range enforcement {
			g.AddEdge(j, ej)
		}
		for _, tj := range byAddress[j.c.Address] {
			if reg.Rank(groupKind(tj.c.Key)) < access {
				g.AddEdge(j, tj)
			}
		}
	}
}
