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

// DefaultEnforceTimeout is how long apply waits for the API server to
// enforce the stack's policies in a namespace before it refuses to grant
// access there.
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
type prover struct {
	t          Target
	policies   []string
	boundAlike bool
	timeout    time.Duration
	mu         sync.Mutex
	byNS       map[string]*proof
	// proven are the policies seen enforced in some namespace.
	proven map[string]bool
}

// proof is the proof of one namespace, made once.
type proof struct {
	once sync.Once
	err  error
}

// prove returns nil once the API server denied the probe of every policy in
// namespace, a *NotEnforcedError when one was still admitted after the
// timeout, or the error that ended the tries (ctx's, a permanent one).
func (p *prover) prove(ctx context.Context, namespace string) error {
	p.mu.Lock()
	pr := p.byNS[namespace]
	if pr == nil {
		pr = &proof{}
		p.byNS[namespace] = pr
	}
	p.mu.Unlock()
	pr.once.Do(func() { pr.err = p.try(ctx, namespace) })
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

// try probes until every policy denies its probe, with backoff, for at most
// the timeout.
func (p *prover) try(ctx context.Context, namespace string) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	delay := 50 * time.Millisecond
	policies := p.toProbe()
	for {
		err := p.t.ProbeEnforced(ctx, namespace, policies)
		var ne *NotEnforcedError
		switch {
		case err == nil:
			p.mu.Lock()
			for _, name := range policies {
				p.proven[name] = true
			}
			p.mu.Unlock()
			return nil
		case errors.As(err, &ne), Transient(err):
		default:
			return fmt.Errorf("prove the stack's admission policies enforced in namespace %s: %w", namespace, err)
		}
		select {
		case <-ctx.Done():
			if ne != nil {
				ne.Waited = time.Since(start)
				return ne
			}
			return fmt.Errorf("prove the stack's admission policies enforced in namespace %s: %w", namespace, err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
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
