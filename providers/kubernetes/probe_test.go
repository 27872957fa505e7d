package kubernetes_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

// TestQuotaProofsShareLists: the proofs of many namespaces asked at once
// read the quotas from a few shared LISTs, not one each, and each sees its
// namespace's quota as the API server has it: computed or not.
func TestQuotaProofsShareLists(t *testing.T) {
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	admin := k8s.NewForConfigOrDie(cfg)
	const n = 40
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("qshare-%02d", i)
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i]}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Half the namespaces have the stack's quota, with its status as the
	// quota controller leaves it (computed): the others have none.
	for _, ns := range names[:n/2] {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: engine.QuotaName, Namespace: ns},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("0")}}}
		if _, err := admin.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var counter kubeapitest.Counter
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig, WrapTransport: counter.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, ns := range names {
		wg.Go(func() { errs[i] = c.ProbeEnforced(ctx, ns, nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !strings.Contains(err.Error(), "does not enforce policy ResourceQuota") {
			t.Errorf("%s: %v", names[i], err)
		}
	}
	lists := 0
	for _, r := range counter.Requests() {
		if strings.Contains(r, "resourcequotas") {
			lists++
		}
	}
	if lists == 0 || lists > 4 {
		t.Errorf("%d namespaces' proofs made %d quota LISTs, want a few shared ones", n, lists)
	}
	for _, ns := range names[n/2:] {
		if err := c.ProbeEnforced(ctx, ns, nil); err != nil {
			t.Errorf("%s has no quota of the stack, yet: %v", ns, err)
		}
	}
}
