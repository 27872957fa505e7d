package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// clears on create and the quota controller fills a moment later.
func (c *Client) quotaComputed(ctx context.Context, namespace string) error {
	list, err := c.typed.CoreV1().ResourceQuotas(namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + engine.QuotaName})
	if err != nil {
		if engine.Transient(err) {
			return err
		}
		return c.explain("list the ResourceQuota of namespace "+namespace, err)
	}
	for _, q := range list.Items {
		for name, want := range q.Spec.Hard {
			got, ok := q.Status.Hard[name]
			_, used := q.Status.Used[name]
			if !ok || !used || got.Cmp(want) != 0 {
				return &engine.NotEnforcedError{Policy: "ResourceQuota " + engine.QuotaName, Namespace: namespace}
			}
		}
	}
	return nil
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
