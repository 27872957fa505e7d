package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
)

// ProbeEnforced proves that the API server enforces the stack's quota and
// each named ValidatingAdmissionPolicy in namespace. First the stack's
// ResourceQuota there must have its status computed (quotaComputed, which
// spares the probes while it is not); then for each policy, a server-side
// dry-run create (nothing is written, and a dry run is admitted exactly as a write
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
// absent or its status is computed (statusComputed): the quota admission
// plugin constrains only what status.hard names, which the API server
// clears on create and the quota controller fills a moment later, or
// computeEmptyQuota at once where nothing counts against the quota.
func (c *Client) quotaComputed(ctx context.Context, namespace string) error {
	q, err := c.typed.CoreV1().ResourceQuotas(namespace).Get(ctx, engine.QuotaName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return c.probeError(fmt.Sprintf("read ResourceQuota %s/%s", namespace, engine.QuotaName), err)
	case statusComputed(q):
		return nil
	}
	return c.computeEmptyQuota(ctx, q)
}

// statusComputed reports whether q's status holds every resource of its
// spec.hard at the same value, with its usage.
func statusComputed(q *corev1.ResourceQuota) bool {
	for name, want := range q.Spec.Hard {
		got, ok := q.Status.Hard[name]
		_, used := q.Status.Used[name]
		if !ok || !used || got.Cmp(want) != 0 {
			return false
		}
	}
	return true
}

// deviceClassQuota is the suffix of the resource names by which a
// ResourceQuota counts the devices ResourceClaims request of a DeviceClass.
const deviceClassQuota = ".deviceclass.resource.k8s.io/devices"

// computeEmptyQuota writes the status of q, the stack's ResourceQuota, in
// a namespace where nothing counts against it yet: no pods, and no
// ResourceClaims where q names device classes. The status is what the
// quota controller would compute there (status.hard its spec.hard, every
// usage zero); writing it spares a tenant's access the wait for that
// controller, which works through a large apply's new quotas at its own
// pace. Where something could count against the quota, or another writer
// changed it meanwhile, the status is the controller's to compute: a
// *engine.NotEnforcedError, for the caller to try again.
func (c *Client) computeEmptyQuota(ctx context.Context, q *corev1.ResourceQuota) error {
	ns := q.Namespace
	notYet := &engine.NotEnforcedError{Policy: "ResourceQuota " + engine.QuotaName, Namespace: ns}
	one := metav1.ListOptions{Limit: 1}
	pods, err := c.typed.CoreV1().Pods(ns).List(ctx, one)
	if err != nil {
		return c.probeError(fmt.Sprintf("list the pods of namespace %s", ns), err)
	}
	if len(pods.Items) > 0 {
		return notYet
	}
	for name := range q.Spec.Hard {
		if !strings.HasSuffix(string(name), deviceClassQuota) {
			continue
		}
		claims, err := c.typed.ResourceV1().ResourceClaims(ns).List(ctx, one)
		if err != nil {
			return c.probeError(fmt.Sprintf("list the ResourceClaims of namespace %s", ns), err)
		}
		if len(claims.Items) > 0 {
			return notYet
		}
		break
	}
	st := q.DeepCopy()
	st.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard.DeepCopy(), Used: corev1.ResourceList{}}
	for name := range q.Spec.Hard {
		st.Status.Used[name] = resource.MustParse("0")
	}
	_, err = c.typed.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, st, metav1.UpdateOptions{FieldManager: engine.FieldManager})
	if apierrors.IsConflict(err) {
		// The controller computed it meanwhile, most often.
		if q, err = c.typed.CoreV1().ResourceQuotas(ns).Get(ctx, engine.QuotaName, metav1.GetOptions{}); err == nil && statusComputed(q) {
			return nil
		}
		return notYet
	}
	if apierrors.IsNotFound(err) {
		return notYet
	}
	if err != nil {
		return c.probeError(fmt.Sprintf("write the status of ResourceQuota %s/%s", ns, engine.QuotaName), err)
	}
	return nil
}

// probeError is err of a proof's request: as it is where it is transient
// (the caller tries again), else explained with what was being done.
func (c *Client) probeError(what string, err error) error {
	if engine.Transient(err) {
		return err
	}
	return c.explain(what, err)
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
