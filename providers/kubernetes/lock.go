package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/gpuform/gpuform/engine"
	"os"
	"os/user"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lock namespace and annotations.
const (
	LockNamespace  = engine.LockNamespace
	annotLockID    = "gpuform.dev/lock-id"
	defaultLockTTL = 30 * time.Second
)

// LockOptions tune Lock.
type LockOptions struct {
	// Wait is how long to wait for a held lock; zero fails at once.
	Wait time.Duration
	// TTL is the lease duration: a holder that stops renewing for this long
	// (a killed process) loses the lock. Zero means 30s.
	TTL time.Duration
	// Holder identifies the holder; empty means user@host pid N.
	Holder string
}

// Lock is a held apply lock: a coordination.k8s.io Lease gpuform-<stack>
// in namespace gpuform-system, renewed in the background until Release.
type Lock struct {
	c     *Client
	stack string
	ID    string
	ttl   time.Duration

	mu     sync.Mutex
	lease  *coordinationv1.Lease
	stop   chan struct{}
	done   chan struct{}
	closed bool
	// lost is closed when the lock can no longer be trusted to be held:
	// another holder took the Lease, or renewals failed for 2/3 of the TTL.
	lost     chan struct{}
	lostOnce sync.Once
}

// Lost is closed when this process may no longer hold the lock.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

func (l *Lock) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// LockName is the Lease name of a stack's lock.
func LockName(stack string) string { return "gpuform-" + stack }

// DefaultHolder is user@host pid N.
func DefaultHolder() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s pid %d", name, host, os.Getpid())
}

// Lock takes the stack's apply lock, creating the namespace and Lease if
// needed. A lock whose holder stopped renewing for longer than its TTL is
// taken over.
func (c *Client) Lock(ctx context.Context, stack string, opts LockOptions) (*Lock, error) {
	if opts.TTL == 0 {
		opts.TTL = defaultLockTTL
	}
	if opts.Holder == "" {
		opts.Holder = DefaultHolder()
	}
	if err := retryTransient(ctx, lockAttempts, func() error { return c.ensureNamespace(ctx, LockNamespace) }); err != nil {
		return nil, c.explain("create namespace "+LockNamespace+" for the lock", err)
	}
	id := randomID()
	leases := c.typed.CoordinationV1().Leases(LockNamespace)
	deadline := time.Now().Add(opts.Wait)
	// Transient failures of the Lease writes are retried (fails counts
	// them, delay is the backoff); reads are retried by the transport.
	fails, delay := 0, retryBase
	transient := func(err error) bool {
		if !engine.Transient(err) || fails+1 >= lockAttempts {
			return false
		}
		fails++
		return sleepRetry(ctx, err, &delay, lockRetryMax) == nil
	}
	for {
		now := metav1.NewMicroTime(time.Now())
		secs := int32(opts.TTL / time.Second)
		cur, err := leases.Get(ctx, LockName(stack), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: LockName(stack), Namespace: LockNamespace, Annotations: map[string]string{annotLockID: id},
					Labels: map[string]string{"app.kubernetes.io/managed-by": "gpuform", "gpuform.dev/lock": stack}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &opts.Holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
			}
			created, err := leases.Create(ctx, l, metav1.CreateOptions{FieldManager: "gpuform"})
			if err == nil {
				return c.startLock(stack, id, opts.TTL, created), nil
			}
			if !apierrors.IsAlreadyExists(err) && !transient(err) {
				return nil, c.explain("create lock "+LockName(stack), err)
			}
			continue
		case err != nil:
			return nil, c.explain("read lock "+LockName(stack), err)
		case cur.Annotations[annotLockID] == id:
			// A create or takeover whose answer was lost went through.
			return c.startLock(stack, id, opts.TTL, cur), nil
		}
		if held := heldBy(cur, time.Now()); held != nil {
			held.Stack = stack
			if time.Now().After(deadline) {
				return nil, held
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the lock of stack %s: %w", stack, ctx.Err())
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		cur.Spec.HolderIdentity, cur.Spec.LeaseDurationSeconds = &opts.Holder, &secs
		cur.Spec.AcquireTime, cur.Spec.RenewTime = &now, &now
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[annotLockID] = id
		updated, err := leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "gpuform"})
		if err == nil {
			return c.startLock(stack, id, opts.TTL, updated), nil
		}
		if !apierrors.IsConflict(err) && !transient(err) {
			return nil, c.explain("take lock "+LockName(stack), err)
		}
	}
}

// heldBy returns who holds l, or nil when it is free or expired.
func heldBy(l *coordinationv1.Lease, now time.Time) *engine.LockHeldError {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return nil
	}
	ttl := defaultLockTTL
	if l.Spec.LeaseDurationSeconds != nil {
		ttl = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if now.After(l.Spec.RenewTime.Add(ttl)) {
		return nil
	}
	since := l.Spec.RenewTime.Time
	if l.Spec.AcquireTime != nil {
		since = l.Spec.AcquireTime.Time
	}
	return &engine.LockHeldError{ID: l.Annotations[annotLockID], Holder: *l.Spec.HolderIdentity, Since: since}
}

func (c *Client) startLock(stack, id string, ttl time.Duration, l *coordinationv1.Lease) *Lock {
	lk := &Lock{c: c, stack: stack, ID: id, ttl: ttl, lease: l, stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
	go lk.renew()
	return lk
}

// renew refreshes the lease's renewTime every TTL/3 until Release.
func (l *Lock) renew() {
	defer close(l.done)
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	leases := l.c.typed.CoordinationV1().Leases(LockNamespace)
	lastOK := time.Now()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		cur := l.lease.DeepCopy()
		l.mu.Unlock()
		now := metav1.NewMicroTime(time.Now())
		cur.Spec.RenewTime = &now
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
		updated, err := leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "gpuform"})
		cancel()
		switch {
		case err == nil:
			lastOK = time.Now()
			l.mu.Lock()
			l.lease = updated
			l.mu.Unlock()
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			l.markLost() // someone changed or removed the Lease: force-unlock, or a takeover
		case time.Since(lastOK) > l.ttl*2/3:
			l.markLost() // the Lease may expire before a renewal gets through
		}
	}
}

// Release stops renewing and deletes the Lease if this lock still holds it.
// It is safe to call more than once.
func (l *Lock) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.mu.Lock()
	rv := l.lease.ResourceVersion
	l.mu.Unlock()
	// A few quick tries only: a lock that cannot be released expires
	// after its TTL anyway, and the caller says how to clear it at once.
	err := retryTransient(ctx, releaseTries, func() error {
		return l.c.typed.CoordinationV1().Leases(LockNamespace).Delete(ctx, LockName(l.stack), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return l.c.explain("release lock "+LockName(l.stack), err)
	}
	return nil
}

// ForceUnlock removes the lock of stack if its ID is id, whoever holds it.
func (c *Client) ForceUnlock(ctx context.Context, stack, id string) error {
	leases := c.typed.CoordinationV1().Leases(LockNamespace)
	cur, err := leases.Get(ctx, LockName(stack), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("stack %s is not locked", stack)
	}
	if err != nil {
		return c.explain("read lock "+LockName(stack), err)
	}
	if got := cur.Annotations[annotLockID]; got != id {
		return fmt.Errorf("the lock of stack %s has ID %s, not %s; nothing was unlocked", stack, got, id)
	}
	rv := cur.ResourceVersion
	if err := leases.Delete(ctx, LockName(stack), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil {
		return c.explain("remove lock "+LockName(stack), err)
	}
	return nil
}

func (c *Client) ensureNamespace(ctx context.Context, name string) error {
	_, err := c.typed.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "gpuform"}}}, metav1.CreateOptions{FieldManager: "gpuform"})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
