package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
)

// ProbeEnforced proves that the API server enforces the stack's quota and
// each named ValidatingAdmissionPolicy in namespace. First the stack's
// ResourceQuota there must have its status computed (quotaComputed: one
// request, which spares the probes while the quota controller catches
// up); then for each policy, a server-side dry-run
// create (nothing is written, and a dry run is admitted exactly as a write
// would be) of a ConfigMap labelled engine.LabelAdmissionProbe with the
// policy's name, which the policy denies once the API server enforces it.
// Admitted: a *engine.NotEnforcedError. Denied by anything else (another
// policy, a webhook, RBAC): that error, for the caller to report.
func (c *Client) ProbeEnforced(ctx context.Context, namespace string, policies []string) error {
	if err := c.quotaComputed(ctx, namespace); err != nil {
		return err
	}
	for _, policy := range policies {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			GenerateName: "gpuform-admission-probe-",
			Namespace:    namespace,
			Labels:       map[string]string{engine.LabelAdmissionProbe: policy},
		}}
		_, err := c.typed.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: engine.FieldManager})
		switch {
		case err == nil:
			return &engine.NotEnforcedError{Policy: policy, Namespace: namespace}
		case deniedByProbe(err, policy):
			continue
		case engine.Transient(err):
			return err
		}
		return c.explain(fmt.Sprintf("dry-run the admission probe of policy %s in namespace %s", policy, namespace), err)
	}
	return nil
}

// quotaComputed is nil when the stack's ResourceQuota in namespace is
// absent or its status is computed (every resource of spec.hard in
// status.hard at the same value, with its usage): the quota admission
// plugin constrains only what status.hard names, which the API server
// clears on create and the quota controller fills a moment later. The
// namespaces waiting at once share one cluster-wide LIST (quotaView).
func (c *Client) quotaComputed(ctx context.Context, namespace string) error {
	q, err := c.quotas.read(ctx, namespace, func(ctx context.Context) (*corev1.ResourceQuotaList, error) {
		return c.typed.CoreV1().ResourceQuotas(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + engine.QuotaName})
	})
	if err != nil {
		if engine.Transient(err) {
			return err
		}
		return c.explain("list the stack's ResourceQuotas", err)
	}
	if q == nil {
		return nil
	}
	for name, want := range q.Spec.Hard {
		got, ok := q.Status.Hard[name]
		_, used := q.Status.Used[name]
		if !ok || !used || got.Cmp(want) != 0 {
			return &engine.NotEnforcedError{Policy: "ResourceQuota " + engine.QuotaName, Namespace: namespace}
		}
	}
	return nil
}

// quotaListInterval is the least time between two LISTs of quotaView.
const quotaListInterval = 500 * time.Millisecond

// quotaView is the ResourceQuotas named engine.QuotaName as one
// cluster-wide LIST saw them, shared by the proofs that wait at once: a
// reader takes a LIST that began after it asked (so it sees the quota its
// apply just wrote), one LIST serves every reader waiting for it, and
// LISTs begin at most every quotaListInterval. While the quota controller
// catches up with a large apply's quotas, a few LISTs a second serve
// thousands of namespaces.
type quotaView struct {
	mu   sync.Mutex
	cond *sync.Cond
	// running is set while a reader lists; started and done count the
	// LISTs begun and the last one ended, last is when it began.
	running       bool
	started, done int64
	last          time.Time
	byNS          map[string]*corev1.ResourceQuota
	err           error
}

// read returns the quota of namespace (nil: none) from a LIST that began
// after the call, made by list.
func (v *quotaView) read(ctx context.Context, namespace string, list func(context.Context) (*corev1.ResourceQuotaList, error)) (*corev1.ResourceQuota, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cond == nil {
		v.cond = sync.NewCond(&v.mu)
	}
	want := v.started + 1
	for v.done < want {
		if v.running {
			v.cond.Wait()
			continue
		}
		v.running = true
		pause := time.Until(v.last.Add(quotaListInterval))
		v.mu.Unlock()
		if pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
		}
		v.mu.Lock()
		v.started++
		gen := v.started
		v.last = time.Now()
		v.mu.Unlock()
		l, err := list(ctx)
		v.mu.Lock()
		v.running, v.done, v.err = false, gen, err
		if err == nil {
			v.byNS = make(map[string]*corev1.ResourceQuota, len(l.Items))
			for i := range l.Items {
				v.byNS[l.Items[i].Namespace] = &l.Items[i]
			}
		}
		v.cond.Broadcast()
	}
	if v.err != nil {
		return nil, v.err
	}
	return v.byNS[namespace], nil
}

// deniedByProbe reports whether err is policy's denial of its admission
// probe: the API server names the policy in the message of a denial, and
// the policy's message says it is the probe.
func deniedByProbe(err error, policy string) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	msg := status.Status().Message
	return strings.Contains(msg, engine.AdmissionProbeMessage) && strings.Contains(msg, policy)
}
