package kubernetes

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/transport"

	"github.com/gpuform/gpuform/internal/textsafe"
)

// Verbosity levels of LogRequests.
const (
	// LogRequestLines logs one line per API request: method, URL path,
	// status and latency.
	LogRequestLines = 1
	// LogRequestDetail adds the full URL (query included, user info
	// removed) and the response's length and content type.
	LogRequestDetail = 2
	// LogRequestHeaders adds the request and response headers, with
	// credentials redacted. It is the most LogRequests prints: higher
	// levels print the same.
	LogRequestHeaders = 3
)

// Redacted is what LogRequests prints in place of a credential.
const Redacted = "(redacted)"

// LogRequests returns a transport wrapper that writes every API request to
// w at the given verbosity (below LogRequestLines: nil, no wrapper). Lines
// start with "api: " and are written whole, so concurrent requests do not
// interleave within a line.
//
// Credentials never reach w: the Authorization, Proxy-Authorization,
// Cookie and Set-Cookie headers and every header whose name mentions a
// token, secret, password or key are printed as Redacted (the scheme of an
// Authorization header is kept), URLs lose their user info, and no request
// or response body is ever printed (a body may hold values of sensitive
// variables). The wrapper sits inside client-go's authentication, so it
// sees the bearer token it redacts; client certificates and keys live in
// the TLS configuration and never pass through it.
func LogRequests(w io.Writer, level int) func(http.RoundTripper) http.RoundTripper {
	if level < LogRequestLines || w == nil {
		return nil
	}
	l := &requestLog{w: w, level: level}
	return func(rt http.RoundTripper) http.RoundTripper {
		return loggingTransport{next: rt, log: l}
	}
}

// WrapWithLog returns wrap (nil: none) with LogRequests(w, level) inside
// it: the transport wrapper of every client the CLI builds. nil when there
// is neither.
func WrapWithLog(wrap func(http.RoundTripper) http.RoundTripper, w io.Writer, level int) func(http.RoundTripper) http.RoundTripper {
	log := LogRequests(w, level)
	switch {
	case log == nil:
		return wrap
	case wrap == nil:
		return log
	}
	return transport.Wrappers(wrap, log)
}

// requestLog serialises the lines of every transport it wraps.
type requestLog struct {
	mu    sync.Mutex
	w     io.Writer
	level int
}

func (l *requestLog) write(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s)
}

type loggingTransport struct {
	next http.RoundTripper
	log  *requestLog
}

// RoundTrip implements http.RoundTripper.
func (t loggingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	elapsed := time.Since(start)
	var b strings.Builder
	target := r.URL.Path
	if t.log.level >= LogRequestDetail {
		target = r.URL.Redacted()
	}
	switch {
	case err != nil:
		textsafe.Fprintf(&b, "api: %s %s -> error after %s: %v\n", r.Method, target, roundLatency(elapsed), err)
	case t.log.level >= LogRequestDetail:
		textsafe.Fprintf(&b, "api: %s %s -> %s in %s (%s, %s)\n", r.Method, target, resp.Status, roundLatency(elapsed), length(resp.ContentLength), orNone(resp.Header.Get("Content-Type")))
	default:
		textsafe.Fprintf(&b, "api: %s %s -> %s in %s\n", r.Method, target, resp.Status, roundLatency(elapsed))
	}
	if t.log.level >= LogRequestHeaders {
		writeHeaders(&b, "> ", r.Header)
		if resp != nil {
			writeHeaders(&b, "< ", resp.Header)
		}
	}
	t.log.write(b.String())
	return resp, err
}

func roundLatency(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func length(n int64) string {
	if n < 0 {
		return "length unknown"
	}
	return fmt.Sprintf("%d bytes", n)
}

func orNone(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

// writeHeaders writes h sorted by name, one "api:   <prefix>Name: value"
// line per value, credentials redacted.
func writeHeaders(b *strings.Builder, prefix string, h http.Header) {
	names := slices.Sorted(maps.Keys(h))
	for _, n := range names {
		for _, v := range h[n] {
			textsafe.Fprintf(b, "api:   %s%s: %s\n", prefix, n, RedactHeader(n, v))
		}
	}
}

// RedactHeader returns the value of header name as LogRequests prints it:
// Redacted for credentials (keeping an Authorization header's scheme, as
// in "Bearer (redacted)"), else the value itself.
func RedactHeader(name, value string) string {
	n := strings.ToLower(name)
	switch {
	case n == "authorization" || n == "proxy-authorization":
		if scheme, _, ok := strings.Cut(value, " "); ok && scheme != "" {
			return scheme + " " + Redacted
		}
		return Redacted
	case n == "cookie" || n == "set-cookie",
		strings.Contains(n, "token"), strings.Contains(n, "secret"),
		strings.Contains(n, "password"), strings.Contains(n, "key"),
		strings.Contains(n, "auth"):
		return Redacted
	}
	return value
}
