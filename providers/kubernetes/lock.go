package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/gpuform/gpuform/engine"
)

// Lock namespace and annotations.
const (
	LockNamespace  = engine.LockNamespace
	annotLockID    = "gpuform.dev/lock-id"
	defaultLockTTL = 30 * time.Second
	// defaultRenew is how often a held lock renews its Lease: a deleted or
	// taken Lease is noticed at the next renewal.
	defaultRenew = time.Second
	// defaultFence is how long a holder may go without a renewal the
	// server accepted before it stops writing; a run that takes a Lease
	// that was not released cleanly waits as long before its first write,
	// so that it never writes while the previous holder may.
	defaultFence = 3 * time.Second
	// renewRetry is the pause after a renewal that failed transiently.
	renewRetry = 250 * time.Millisecond
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
//
// It is a fence: it counts as lost as soon as a renewal finds the Lease
// deleted or changed by someone else, or when no renewal got through for
// the fence interval (Err then says why, and Lost is closed); a run must not
// write after that. A run that takes a Lease its last holder did not
// release (none yet, deleted, force-unlocked, expired) must not write
// before WritableAt: by then that holder stopped writing.
type Lock struct {
	c     *Client
	stack string
	ID    string
	// WritableAt is when this run may write first: zero when the Lease was
	// released cleanly by its last holder, else the fence interval after
	// it was taken.
	WritableAt time.Time

	every, fence time.Duration

	mu    sync.Mutex
	lease *coordinationv1.Lease
	// confirmed is when the last write of the Lease that the server
	// accepted was sent: the Lease was this run's then.
	confirmed time.Time
	// lastErr is the last renewal's transient error; cause is why the lock
	// was lost (nil while held).
	lastErr, cause error
	stop, done     chan struct{}
	closed         bool
	lost           chan struct{}
}

// Lost is closed when this process may no longer hold the lock; Err then
// says why.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Err is nil while this run may write under the lock, else why it may not
// (a *engine.LockLostError). It checks the fence interval itself, so a
// renewal that is late cannot let a write through.
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cause == nil && time.Since(l.confirmed) >= l.fence {
		l.loseLocked(l.unconfirmed())
	}
	return l.cause
}

// lose marks the lock lost for reason, once.
func (l *Lock) lose(reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loseLocked(reason)
}

func (l *Lock) loseLocked(reason string) {
	if l.cause != nil {
		return
	}
	l.cause = &engine.LockLostError{Stack: l.stack, ID: l.ID, Reason: reason}
	close(l.lost)
}

// unconfirmed is why the lock is lost when no renewal got through in time.
func (l *Lock) unconfirmed() string {
	why := "no renewal was answered in time"
	if l.lastErr != nil {
		why = "last error: " + strings.Join(strings.Fields(l.lastErr.Error()), " ")
	}
	return fmt.Sprintf("its Lease could not be renewed for %s (%s), so the API server looks unavailable and another run may take the lock", l.fence, why)
}

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
// taken over; a Lease whose holder released it is taken at once.
func (c *Client) Lock(ctx context.Context, stack string, opts LockOptions) (*Lock, error) {
	opts = opts.withDefaults()
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
		sent := time.Now()
		now := metav1.NewMicroTime(sent)
		secs := int32(opts.TTL / time.Second)
		cur, err := leases.Get(ctx, LockName(stack), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// No Lease: none yet, or deleted under a holder that may still
			// be writing until its next renewal.
			l := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: LockName(stack), Namespace: LockNamespace, Annotations: map[string]string{annotLockID: id},
					Labels: map[string]string{"app.kubernetes.io/managed-by": "gpuform", "gpuform.dev/lock": stack}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &opts.Holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
			}
			created, err := leases.Create(ctx, l, metav1.CreateOptions{FieldManager: "gpuform"})
			if err == nil {
				return c.startLock(stack, id, created, sent, false), nil
			}
			if !apierrors.IsAlreadyExists(err) && !transient(err) {
				return nil, c.explain("create lock "+LockName(stack), err)
			}
			continue
		case err != nil:
			return nil, c.explain("read lock "+LockName(stack), err)
		case cur.Annotations[annotLockID] == id:
			// A create or takeover whose answer was lost went through.
			return c.startLock(stack, id, cur, sent, false), nil
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
		released := cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity == ""
		cur.Spec.HolderIdentity, cur.Spec.LeaseDurationSeconds = &opts.Holder, &secs
		cur.Spec.AcquireTime, cur.Spec.RenewTime = &now, &now
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[annotLockID] = id
		updated, err := leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "gpuform"})
		if err == nil {
			return c.startLock(stack, id, updated, sent, released), nil
		}
		if !apierrors.IsConflict(err) && !transient(err) {
			return nil, c.explain("take lock "+LockName(stack), err)
		}
	}
}

// withDefaults fills in the zero options.
func (o LockOptions) withDefaults() LockOptions {
	if o.TTL <= 0 {
		o.TTL = defaultLockTTL
	}
	if o.Holder == "" {
		o.Holder = DefaultHolder()
	}
	return o
}

// heldBy returns who holds l, or nil when it is free (released) or expired.
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

// startLock starts renewing lease, taken by a write sent at sent; released
// says its last holder released it, so this run may write at once.
func (c *Client) startLock(stack, id string, lease *coordinationv1.Lease, sent time.Time, released bool) *Lock {
	l := &Lock{c: c, stack: stack, ID: id, every: defaultRenew, fence: defaultFence,
		lease: lease, confirmed: sent, stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
	if !released {
		l.WritableAt = time.Now().Add(l.fence)
	}
	go l.renew()
	return l
}

// renew writes the Lease's renewTime every second until Release, and again
// 250ms after a transient failure. A Lease deleted or changed by someone
// else, a permanent error, or no renewal accepted for the fence interval
// (3s) loses the lock.
func (l *Lock) renew() {
	defer close(l.done)
	wait := l.every
	for {
		l.mu.Lock()
		deadline := l.confirmed.Add(l.fence)
		l.mu.Unlock()
		t := time.NewTimer(min(wait, time.Until(deadline)))
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-t.C:
		}
		if !time.Now().Before(deadline) {
			l.mu.Lock()
			l.loseLocked(l.unconfirmed())
			l.mu.Unlock()
			return
		}
		err := l.renewOnce(deadline)
		switch {
		case err == nil:
			wait = l.every
		case apierrors.IsNotFound(err):
			l.lose("its Lease was deleted (gpuform force-unlock, or by hand), so another run may take the lock")
			return
		case apierrors.IsConflict(err):
			// Someone changed the Lease, or a renewal whose answer was
			// lost went through: read it to tell.
			if why := l.reread(); why != "" {
				l.lose(why)
				return
			}
			wait = 0
		case engine.Transient(err) || errors.Is(err, context.DeadlineExceeded):
			l.mu.Lock()
			l.lastErr = err
			l.mu.Unlock()
			wait = renewRetry
		default:
			l.lose(fmt.Sprintf("renewing its Lease failed: %s", strings.Join(strings.Fields(err.Error()), " ")))
			return
		}
	}
}

// renewOnce writes the Lease's renewTime with the resourceVersion last
// seen, so that any change by someone else is a conflict. It is not
// retried by client-go (a Retry-After could outlast the fence) and ends by
// deadline.
func (l *Lock) renewOnce(deadline time.Time) error {
	l.mu.Lock()
	cur := l.lease.DeepCopy()
	l.mu.Unlock()
	sent := time.Now()
	now := metav1.NewMicroTime(sent)
	cur.Spec.RenewTime = &now
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	updated := &coordinationv1.Lease{}
	err := l.c.typed.CoordinationV1().RESTClient().Put().MaxRetries(0).
		Namespace(LockNamespace).Resource("leases").Name(LockName(l.stack)).
		VersionedParams(&metav1.UpdateOptions{FieldManager: "gpuform"}, scheme.ParameterCodec).
		Body(cur).Do(ctx).Into(updated)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lease, l.confirmed, l.lastErr = updated, sent, nil
	return nil
}

// reread reads the Lease after a conflict. When it still carries this
// run's lock ID (a renewal whose answer was lost went through, or someone
// only labelled it), it is kept and "" returned; else the reason the lock
// is lost.
func (l *Lock) reread() string {
	ctx, cancel := context.WithTimeout(context.Background(), l.every)
	defer cancel()
	sent := time.Now()
	cur, err := l.c.typed.CoordinationV1().Leases(LockNamespace).Get(ctx, LockName(l.stack), metav1.GetOptions{})
	switch {
	case err == nil && cur.Annotations[annotLockID] == l.ID:
		l.mu.Lock()
		l.lease, l.confirmed = cur, sent
		l.mu.Unlock()
		return ""
	case err == nil && cur.Spec.HolderIdentity != nil && *cur.Spec.HolderIdentity != "":
		return fmt.Sprintf("its Lease was taken by %s (lock ID %s)", *cur.Spec.HolderIdentity, cur.Annotations[annotLockID])
	case apierrors.IsNotFound(err):
		return "its Lease was deleted (gpuform force-unlock, or by hand), so another run may take the lock"
	}
	return "its Lease was changed by someone else, so another run may take the lock"
}

// Release stops renewing and, if this run still holds the Lease, marks it
// released (no holder): the next run takes it at once. It is safe to call
// more than once.
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
	cur := l.lease
	l.mu.Unlock()
	leases := l.c.typed.CoordinationV1().Leases(LockNamespace)
	// A few quick tries only: a lock that cannot be released expires
	// after its TTL anyway, and the caller says how to clear it at once.
	// The write carries the resourceVersion last seen: a Lease someone
	// else deleted or took since is left alone.
	err := retryTransient(ctx, releaseTries, func() error {
		free := cur.DeepCopy()
		now := metav1.NewMicroTime(time.Now())
		free.Spec.HolderIdentity, free.Spec.RenewTime = nil, &now
		delete(free.Annotations, annotLockID)
		_, err := leases.Update(ctx, free, metav1.UpdateOptions{FieldManager: "gpuform"})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			// Still ours (a renewal whose answer was lost)? Then again.
			again, gerr := leases.Get(ctx, LockName(l.stack), metav1.GetOptions{})
			if gerr != nil || again.Annotations[annotLockID] != l.ID {
				return nil
			}
			cur = again
		}
		return err
	})
	if err != nil {
		return l.c.explain("release lock "+LockName(l.stack), err)
	}
	return nil
}

// ForceUnlock removes the lock of stack if its ID is id, whoever holds it:
// it deletes the Lease, so the holder, if it still runs, notices at its
// next renewal and stops writing, and the next run waits out the fence
// interval before it writes.
func (c *Client) ForceUnlock(ctx context.Context, stack, id string) error {
	leases := c.typed.CoordinationV1().Leases(LockNamespace)
	cur, err := leases.Get(ctx, LockName(stack), metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && (cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity == "") {
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
