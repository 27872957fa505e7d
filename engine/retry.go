package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Transient reports whether err is worth retrying: throttling (429),
// server errors (5xx), timeouts, resourceVersion conflicts and broken
// connections. Invalid objects (422), forbidden (403), not found and bad
// requests are permanent.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	switch {
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err),
		apierrors.IsNotFound(err), apierrors.IsUnauthorized(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsAlreadyExists(err), apierrors.IsGone(err):
		return false
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsConflict(err),
		apierrors.IsUnexpectedServerError(err):
		return true
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		code := se.Status().Code
		return code == 429 || code >= 500
	}
	var ne net.Error
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// withRetry runs op until it succeeds, fails permanently or runs out of
// attempts. Each attempt gets its own timeout and outlives ctx by at most
// InterruptGrace, so that a request in flight when the user presses Ctrl-C
// usually completes but a hung one cannot hold the run; ctx stops further
// attempts at once. A lost lock (the cause of ctx, or the fence before a
// retry) gives no grace: another run may be writing.
func (ex *executor) withRetry(ctx context.Context, op func(context.Context) error) (int, error) {
	r := ex.opts.Retry
	if r.Attempts <= 0 {
		r.Attempts = 6
	}
	if r.Base <= 0 {
		r.Base = 200 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 10 * time.Second
	}
	timeout := ex.opts.RequestTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	delay := r.Base
	var err error
	for attempt := 1; ; attempt++ {
		if attempt > 1 && ex.fenced() {
			return attempt - 1, err
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		stop := context.AfterFunc(ctx, func() {
			if lockLost(ctx) {
				cancel()
				return
			}
			select {
			case <-time.After(ex.opts.InterruptGrace):
				cancel()
			case <-actx.Done():
			}
		})
		err = op(actx)
		stop()
		cut := actx.Err() == context.Canceled
		cancel()
		if cut && err != nil && lockLost(ctx) {
			return attempt, fmt.Errorf("cut when the lock was lost, so it may or may not have been applied (the next apply converges): %w", err)
		}
		if cut && err != nil {
			return attempt, fmt.Errorf("cut %s after the interruption, so it may or may not have been applied (the next apply converges): %w", ex.opts.InterruptGrace, err)
		}
		if err == nil || !Transient(err) || attempt >= r.Attempts {
			return attempt, err
		}
		wait := delay + time.Duration(rand.Int64N(int64(delay)/2+1))
		if s, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
		}
		wait = min(wait, r.Max)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return attempt, err
		}
		delay = min(delay*2, r.Max)
	}
}

// lockLost reports whether ctx ended because the stack's lock was lost.
func lockLost(ctx context.Context) bool {
	var lost *LockLostError
	return errors.As(context.Cause(ctx), &lost)
}
