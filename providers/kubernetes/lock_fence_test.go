package kubernetes_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/faultproxy"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

// lostWithin waits up to d for l to be lost and returns why and how long it
// took.
func lostWithin(t *testing.T, l *kubernetes.Lock, d time.Duration) (*engine.LockLostError, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case <-l.Lost():
	case <-time.After(d):
		t.Fatalf("the lock was not lost within %s", d)
	}
	took := time.Since(start)
	var lost *engine.LockLostError
	if !errors.As(l.Err(), &lost) {
		t.Fatalf("a lost lock's Err is %v, want a *engine.LockLostError", l.Err())
	}
	return lost, took
}

// A deleted Lease is noticed at the next renewal, a second apart by default
// (it was 10s: a second apply wrote meanwhile), and the lock says why. The
// next run takes a Lease that was not released, so it may only write once
// the fence interval passed; a Lease released cleanly is written under at
// once, and releasing keeps it, without a holder.
func TestLockFenceNoticesADeletedLease(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, cs := client(t)
	leases := cs.CoordinationV1().Leases(kubernetes.LockNamespace)
	a, err := c.Lock(ctx, "fence-del", kubernetes.LockOptions{Holder: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(context.Background())
	time.Sleep(300 * time.Millisecond)
	if err := a.Err(); err != nil {
		t.Fatalf("a healthy lock: %v", err)
	}
	if err := leases.Delete(ctx, kubernetes.LockName("fence-del"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lost, took := lostWithin(t, a, 5*time.Second)
	t.Logf("a deleted Lease was noticed after %s: %v", took.Round(time.Millisecond), lost)
	if took > 1500*time.Millisecond {
		t.Errorf("a deleted Lease was noticed after %s, want within 1.5s (renewals 1s apart)", took)
	}
	if lost.Stack != "fence-del" || lost.ID != a.ID || !strings.Contains(lost.Error(), "its Lease was deleted") {
		t.Errorf("lost for %q, want the deleted Lease of this lock", lost)
	}

	taken := time.Now()
	b, err := c.Lock(ctx, "fence-del", kubernetes.LockOptions{Holder: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if w := b.WritableAt.Sub(taken); w < 2900*time.Millisecond || w > 4*time.Second {
		t.Errorf("a lock taken after its Lease was deleted is writable %s after it was taken, want the 3s fence", w)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := leases.Get(ctx, kubernetes.LockName("fence-del"), metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity != nil || l.Annotations["gpuform.dev/lock-id"] != "" {
		t.Fatalf("a released Lease: %v, %+v; want it kept without a holder or lock ID", err, l)
	}
	if err := c.ForceUnlock(ctx, "fence-del", b.ID); err == nil || !strings.Contains(err.Error(), "is not locked") {
		t.Errorf("force-unlock of a released lock: %v", err)
	}
	c2, err := c.Lock(ctx, "fence-del", kubernetes.LockOptions{Holder: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !c2.WritableAt.IsZero() {
		t.Errorf("a lock released cleanly is writable only at %s", c2.WritableAt)
	}
	_ = c2.Release(ctx)
}

// Another run taking the Lease (an expired one, or by hand) is noticed at
// the next renewal and named; releasing the lost lock leaves the new
// holder's Lease alone.
func TestLockFenceNoticesATakeover(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, cs := client(t)
	leases := cs.CoordinationV1().Leases(kubernetes.LockNamespace)
	a, err := c.Lock(ctx, "fence-take", kubernetes.LockOptions{Holder: "a"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := leases.Get(ctx, kubernetes.LockName("fence-take"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	intruder := "intruder"
	l.Spec.HolderIdentity = &intruder
	l.Annotations["gpuform.dev/lock-id"] = "feedface"
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	lost, took := lostWithin(t, a, 5*time.Second)
	if took > 1500*time.Millisecond || !strings.Contains(lost.Error(), "its Lease was taken by intruder (lock ID feedface)") {
		t.Errorf("after %s: %v; want the intruder named within 1.5s", took, lost)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l, err = leases.Get(ctx, kubernetes.LockName("fence-take"), metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != intruder {
		t.Errorf("the lost lock's release touched the new holder's Lease: %v, %+v", err, l.Spec)
	}
}

// lockProxy is a fault proxy in front of the test server and a client
// through it.
func lockProxy(t *testing.T) (*faultproxy.Proxy, *kubernetes.Client) {
	t.Helper()
	admin, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(&rest.Config{Host: admin.Host, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}, faultproxy.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	tok, err := clientcmd.LoadFromFile(srv.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.WriteKubeconfig(path, tok.AuthInfos[tok.Contexts[tok.CurrentContext].AuthInfo]); err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// A renewal whose answer was lost went through: the next one conflicts,
// finds the Lease still this run's, and goes on. Renewals that hang or fail
// for the fence interval lose the lock (the Lease may have been deleted
// meanwhile, and a new holder waits as long before it writes), and Err says
// so even before the renewer does.
func TestLockFenceWithoutRenewals(t *testing.T) {
	ctx := kubeapitest.Context(t)
	p, c := lockProxy(t)
	renewals := regexp.MustCompile(`/leases/gpuform-fence-`)

	a, err := c.Lock(ctx, "fence-lostanswer", kubernetes.LockOptions{Holder: "a"})
	if err != nil {
		t.Fatal(err)
	}
	p.AddRule(faultproxy.Rule{Name: "lose", Methods: []string{"PUT"}, Path: renewals, Count: 1, Faults: []faultproxy.Fault{{Kind: faultproxy.LoseResponse}}})
	time.Sleep(4 * time.Second)
	if p.Injected("lose") != 1 {
		t.Fatal("no renewal's answer was lost: the test proves nothing")
	}
	if err := a.Err(); err != nil {
		t.Errorf("a lock whose renewal's answer was lost: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lock(ctx, "fence-lostanswer", kubernetes.LockOptions{Holder: "b"}); err != nil {
		t.Errorf("after a renewal's lost answer the release did not free the lock: %v", err)
	}

	for _, fault := range []faultproxy.Fault{{Kind: faultproxy.Delay, Delay: time.Hour}, {Kind: faultproxy.Status, Code: 503}} {
		t.Run(fault.Kind.String(), func(t *testing.T) {
			p.ClearRules()
			stack := "fence-" + fault.Kind.String()
			a, err := c.Lock(ctx, stack, kubernetes.LockOptions{Holder: "a"})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				p.ClearRules()
				_ = a.Release(context.Background())
			}()
			taken := time.Now()
			p.AddRule(faultproxy.Rule{Name: "renewals", Methods: []string{"PUT"}, Path: renewals, Faults: []faultproxy.Fault{fault}})
			time.Sleep(2800 * time.Millisecond)
			if err := a.Err(); err != nil {
				t.Fatalf("lost %s after the lock was taken, before its 3s fence: %v", time.Since(taken), err)
			}
			lost, _ := lostWithin(t, a, 2*time.Second)
			if took := time.Since(taken); took > 3300*time.Millisecond {
				t.Errorf("lost %s after the last renewal, want by the 3s fence", took)
			}
			if !strings.Contains(lost.Error(), "its Lease could not be renewed for 3s") {
				t.Errorf("lost for %v", lost)
			}
		})
	}
}
