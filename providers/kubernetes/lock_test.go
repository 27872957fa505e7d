package kubernetes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

var srv *kubeapitest.Server

func TestMain(m *testing.M) { kubeapitest.Main(m, &srv) }

func client(t *testing.T) (*kubernetes.Client, k8s.Interface) {
	t.Helper()
	c, cfg := clientFor(t, srv)
	return c, k8s.NewForConfigOrDie(cfg)
}

// clientFor returns a Client of the API server s and its REST config.
func clientFor(t *testing.T, s *kubeapitest.Server) (*kubernetes.Client, *rest.Config) {
	t.Helper()
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: s.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

func TestLockRenewsAndNoticesLoss(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, cs := client(t)
	l, err := c.Lock(ctx, "renew", kubernetes.LockOptions{TTL: 3 * time.Second, Holder: "a"})
	if err != nil {
		t.Fatal(err)
	}
	// Renewals keep it held past its TTL.
	time.Sleep(4 * time.Second)
	_, err = c.Lock(ctx, "renew", kubernetes.LockOptions{TTL: 3 * time.Second, Holder: "b"})
	var held *engine.LockHeldError
	if !errors.As(err, &held) || held.Holder != "a" || held.ID != l.ID {
		t.Fatalf("a renewed lock was not held: %v", err)
	}
	select {
	case <-l.Lost():
		t.Fatal("a healthy lock reported lost")
	default:
	}
	// Someone removes the Lease (force-unlock): the holder notices at its next renewal.
	if err := cs.CoordinationV1().Leases(kubernetes.LockNamespace).Delete(ctx, kubernetes.LockName("renew"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the lock did not notice that its Lease was removed")
	}
	if err := l.Release(context.Background()); err != nil {
		t.Errorf("release after loss: %v", err)
	}
}

func TestLockWaitsForRelease(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, _ := client(t)
	l, err := c.Lock(ctx, "expire", kubernetes.LockOptions{TTL: 2 * time.Second, Holder: "a"})
	if err != nil {
		t.Fatal(err)
	}
	// A second run waiting with a timeout gets it once the first releases.
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = l.Release(context.Background())
	}()
	l2, err := c.Lock(ctx, "expire", kubernetes.LockOptions{TTL: 2 * time.Second, Holder: "b", Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("waiting for a released lock: %v", err)
	}
	_ = l2.Release(ctx)
}
