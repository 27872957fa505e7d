package kubernetes_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
)

// TestQuotaProofComputesEmptyNamespaces, on the real API server and its
// quota controller: the proof of a new quota where nothing counts against
// it ends enforced (the controller's status or the one the proof wrote:
// status.hard its spec.hard, usage zero); where a pod, or a ResourceClaim
// under a quota of device classes, could count, the proof never writes the
// status. TestComputeEmptyQuota holds the same without a controller.
func TestQuotaProofComputesEmptyNamespaces(t *testing.T) {
	c, admin := client(t)
	ctx := t.Context()
	gpus := corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("2"), "pods": resource.MustParse("10")}
	devices := corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("0"), "gpuform-h100.deviceclass.resource.k8s.io/devices": resource.MustParse("1")}
	cases := []struct {
		name        string
		hard        corev1.ResourceList
		pod, claim  bool
		wantWritten bool
	}{
		{name: "empty", hard: gpus, wantWritten: true},
		{name: "empty-devices", hard: devices, wantWritten: true},
		{name: "pod", hard: gpus, pod: true},
		{name: "claim", hard: devices, claim: true},
		// A claim counts only under a quota of device classes.
		{name: "claim-no-devices", hard: gpus, claim: true, wantWritten: true},
	}
	// Several namespaces per case, their quotas created at once and each
	// proven at once, mostly before the quota controller computed them.
	const per = 4
	type ns struct {
		name string
		tc   int
	}
	var all []ns
	for i, tc := range cases {
		for j := range per {
			all = append(all, ns{fmt.Sprintf("qproof-%s-%d", tc.name, j), i})
		}
	}
	each := func(f func(i int, n ns) error) {
		t.Helper()
		errs := make([]error, len(all))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i, n := range all {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				errs[i] = f(i, n)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	each(func(_ int, n ns) error {
		tc := cases[n.tc]
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.name}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if tc.pod {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: n.name},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}}}
			if _, err := admin.CoreV1().Pods(n.name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		if tc.claim {
			claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: n.name},
				Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
					Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpuform-h100"}}}}}}
			if _, err := admin.ResourceV1().ResourceClaims(n.name).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	each(func(_ int, n ns) error {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: engine.QuotaName, Namespace: n.name},
			Spec: corev1.ResourceQuotaSpec{Hard: cases[n.tc].hard}}
		_, err := admin.CoreV1().ResourceQuotas(n.name).Create(ctx, q, metav1.CreateOptions{})
		return err
	})
	errs := make([]error, len(all))
	each(func(i int, n ns) error {
		errs[i] = c.ProbeEnforced(ctx, n.name, nil)
		return nil
	})
	for i, n := range all {
		tc := cases[n.tc]
		q, err := admin.CoreV1().ResourceQuotas(n.name).Get(ctx, engine.QuotaName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		written := false
		for _, mf := range q.ManagedFields {
			written = written || (mf.Manager == engine.FieldManager && mf.Subresource == "status")
		}
		var ne *engine.NotEnforcedError
		switch {
		case tc.wantWritten && errs[i] != nil:
			t.Errorf("%s: nothing counts against its new quota, yet the proof failed: %v", n.name, errs[i])
		case tc.wantWritten:
			for name, want := range tc.hard {
				got, used := q.Status.Hard[name], q.Status.Used[name]
				if got.Cmp(want) != 0 || !used.IsZero() {
					t.Errorf("%s: status of %s is hard %s used %s, want hard %s used 0", n.name, name, got.String(), used.String(), want.String())
				}
			}
		case written:
			t.Errorf("%s: the proof wrote the quota's status though a %s could count against it", n.name, tc.name)
		case errs[i] != nil && !errors.As(errs[i], &ne):
			t.Errorf("%s: %v, want nil or a NotEnforcedError", n.name, errs[i])
		}
	}
}
