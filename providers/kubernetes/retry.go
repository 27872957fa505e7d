package kubernetes

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gpuform/gpuform/engine"
)

// Bounds of the provider's own retries: reads at the transport, and the
// lock's writes. (Changes are retried by the engine, engine.Retry.)
const (
	readAttempts  = 8
	retryBase     = 200 * time.Millisecond
	readRetryMax  = 2 * time.Second
	lockAttempts  = 6
	lockRetryMax  = 5 * time.Second
	releaseTries  = 3
	retryAfterMax = 10 * time.Second
)

// retryReads wraps rt so that reads (GET and HEAD, not watches) that fail
// transiently, on a 429, a 5xx or a broken connection, are sent again with
// backoff, honouring Retry-After. Reads change nothing, so repeating them
// is always safe; writes are retried where their meaning is known (the
// engine for changes, Lock for the Lease).
func retryReads(rt http.RoundTripper) http.RoundTripper {
	return readRetrier{rt}
}

type readRetrier struct{ rt http.RoundTripper }

func (r readRetrier) RoundTrip(req *http.Request) (*http.Response, error) {
	if (req.Method != http.MethodGet && req.Method != http.MethodHead) || req.URL.Query().Get("watch") != "" {
		return r.rt.RoundTrip(req)
	}
	delay := retryBase
	for attempt := 1; ; attempt++ {
		resp, err := r.rt.RoundTrip(req)
		if attempt >= readAttempts || !transientResponse(resp, err) {
			return resp, err
		}
		wait := jitter(delay)
		if resp != nil {
			if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && time.Duration(s)*time.Second > wait {
				wait = min(time.Duration(s)*time.Second, retryAfterMax)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
		delay = min(delay*2, readRetryMax)
	}
}

// transientResponse reports whether a read's outcome is worth repeating.
// A refused connection is not: nothing listens there, and a cluster that
// is down or misnamed is reported at once rather than after every retry.
func transientResponse(resp *http.Response, err error) bool {
	if err != nil {
		var ne net.Error
		return errors.Is(err, syscall.ECONNRESET) ||
			errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
			(errors.As(err, &ne) && ne.Timeout())
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}

// jitter is d plus up to 50% at random.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

// retryTransient runs op until it succeeds, fails on an error that
// engine.Transient calls permanent, runs out of attempts or ctx ends; it
// returns op's last error. A Retry-After the server suggests is honoured.
func retryTransient(ctx context.Context, attempts int, op func() error) error {
	return retryWhile(ctx, attempts, lockRetryMax, engine.Transient, op)
}

// retryWhile runs op until it succeeds, fails on an error retry rejects,
// runs out of attempts or ctx ends, and returns op's last error. The waits
// double from retryBase up to maxDelay, or are the server's Retry-After
// when longer.
func retryWhile(ctx context.Context, attempts int, maxDelay time.Duration, retry func(error) bool, op func() error) error {
	delay := retryBase
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !retry(err) || attempt >= attempts {
			return err
		}
		if err := sleepRetry(ctx, err, &delay, maxDelay); err != nil {
			return err
		}
	}
}

// sleepRetry waits out the backoff delay (or the server's Retry-After, when
// longer) after lastErr, doubles delay up to maxDelay, and returns ctx's
// error if it ends first.
func sleepRetry(ctx context.Context, lastErr error, delay *time.Duration, maxDelay time.Duration) error {
	wait := jitter(*delay)
	if s, ok := retryAfter(lastErr); ok && s > wait {
		wait = min(s, retryAfterMax)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
	}
	*delay = min(*delay*2, maxDelay)
	return nil
}

// retryAfter is the delay the server suggested with err (Retry-After).
func retryAfter(err error) (time.Duration, bool) {
	s, ok := apierrors.SuggestsClientDelay(err)
	return time.Duration(s) * time.Second, ok
}
