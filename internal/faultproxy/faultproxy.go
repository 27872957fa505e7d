// Package faultproxy is a fault-injecting HTTPS reverse proxy for tests. It
// sits on loopback between a client (gpuform) and a Kubernetes API server
// and, by rule (method, path, probability, count), answers with an error
// status (429 with Retry-After, 500, 503), resets the connection, delays the
// request, loses the response after the server handled it, or cuts a watch
// stream. It records every request it sees, and it can be switched to
// "server gone", where it resets every connection.
//
// The proxy terminates TLS with its own certificate and forwards to the
// upstream server with the transport of a rest.Config. Credentials the
// client sends (a bearer token) pass through unchanged, so the server sees
// the client's own identity; WriteKubeconfig writes a kubeconfig that points
// at the proxy and trusts its certificate.
package faultproxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kind is what a fault does to a request.
type Kind int

// Fault kinds.
const (
	// Status answers with Fault.Code (and Retry-After when Fault.RetryAfter
	// is set) without forwarding: the server never sees the request.
	Status Kind = iota + 1
	// Reset resets the connection (TCP RST) without forwarding.
	Reset
	// Delay waits Fault.Delay, then forwards.
	Delay
	// LoseResponse forwards the request, reads the server's whole answer,
	// then resets the connection: the server did it, the client never hears.
	LoseResponse
	// DropWatch forwards a watch and cuts its stream after Fault.Delay.
	DropWatch
	// GoneForGood switches the proxy to "server gone" (see SetGone) and
	// resets this request: nothing gets through afterwards.
	GoneForGood
)

// String names the kind in logs and test failures.
func (k Kind) String() string {
	switch k {
	case Status:
		return "status"
	case Reset:
		return "reset"
	case Delay:
		return "delay"
	case LoseResponse:
		return "lose-response"
	case DropWatch:
		return "drop-watch"
	case GoneForGood:
		return "gone"
	}
	return "none"
}

// Fault is one injected failure.
type Fault struct {
	Kind Kind
	// Code is the HTTP status of a Status fault.
	Code int
	// RetryAfter, when positive, is sent as a Retry-After header in whole
	// seconds (rounded up) with a Status fault.
	RetryAfter time.Duration
	// Delay is how long a Delay fault holds the request, or how long a
	// DropWatch fault lets the stream run.
	Delay time.Duration
}

// Rule selects requests and the faults injected into them.
type Rule struct {
	// Name identifies the rule in the log (Entry.Rule) and in Injected.
	Name string
	// Methods lists the HTTP methods the rule matches; empty matches all.
	Methods []string
	// Path, when set, must match the request's path and query
	// ("/api/v1/namespaces?labelSelector=..."); nil matches all.
	Path *regexp.Regexp
	// ExceptPath, when set, leaves out the requests whose path and query
	// match it.
	ExceptPath *regexp.Regexp
	// WatchOnly restricts the rule to watch requests (watch=true).
	WatchOnly bool
	// Probability is the chance that a matching request gets a fault; 0
	// means always.
	Probability float64
	// Skip lets the first Skip matching requests through untouched.
	Skip int
	// Count is the most faults the rule injects; 0 means no limit.
	Count int
	// MaxInARow is the most faults injected in a row into requests with
	// the same method, path and query: the next one goes through, as a
	// transient fault would clear. 0 means no limit.
	MaxInARow int
	// Faults are drawn from at random (uniformly) for each injection.
	Faults []Fault
}

// Entry is one request the proxy saw.
type Entry struct {
	// Time is when the proxy received the request; End when it answered
	// (or reset) it.
	Time, End time.Time
	Method    string
	// Path is the request's path, with "?query" when it had one.
	Path string
	// Rule and Fault say what was injected; Rule is empty when the request
	// was forwarded untouched.
	Rule  string
	Fault Fault
	// Upstream is the status the upstream server answered with (0: the
	// request never reached it, or the transport failed).
	Upstream int
	// ResourceVersion is metadata.resourceVersion of the upstream answer
	// of a mutating request, when it had one.
	ResourceVersion string
	// Gone is set for requests refused because the proxy was gone.
	Gone bool
}

// Forwarded reports whether the upstream server answered the request.
func (e Entry) Forwarded() bool { return e.Upstream != 0 }

// Mutating reports whether the request may change state (not GET, HEAD,
// OPTIONS).
func (e Entry) Mutating() bool {
	return e.Method != http.MethodGet && e.Method != http.MethodHead && e.Method != http.MethodOptions
}

// Options tune New.
type Options struct {
	// Seed makes the random draws (probability, fault choice) repeatable;
	// the order of concurrent requests still varies between runs.
	Seed uint64
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	// URL is https://127.0.0.1:PORT of the proxy.
	URL string
	// CAData is the PEM certificate a client must trust to reach URL.
	CAData []byte

	upstream *url.URL
	rt       http.RoundTripper
	srv      *httptest.Server
	closing  chan struct{}

	mu       sync.Mutex
	rules    []*ruleState
	inARow   map[string]int
	rng      *rand.Rand
	gone     bool
	log      []Entry
	accepted int
	refused  int
}

type ruleState struct {
	Rule
	seen, injected int
}

// New starts a proxy on 127.0.0.1 in front of the server upstream
// describes (its Host, TLS settings and, if any, credentials; credentials
// the client sends take precedence).
func New(upstream *rest.Config, opts Options) (*Proxy, error) {
	u, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("parse upstream host %q: %w", upstream.Host, err)
	}
	rt, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("build the transport to %s: %w", upstream.Host, err)
	}
	p := &Proxy{upstream: u, rt: rt, closing: make(chan struct{}), inARow: map[string]int{},
		rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.Listener = &goneListener{Listener: p.srv.Listener, p: p}
	p.srv.StartTLS()
	p.URL = p.srv.URL
	p.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	return p, nil
}

// Close stops the proxy: delayed requests end at once, the listener closes
// and Close waits for the requests in flight.
func (p *Proxy) Close() {
	p.mu.Lock()
	select {
	case <-p.closing:
		p.mu.Unlock()
		return
	default:
		close(p.closing)
	}
	p.mu.Unlock()
	p.srv.CloseClientConnections()
	p.srv.Close()
}

// AddRule appends r; rules are tried in the order added, and the first
// that injects a fault wins. It panics on a rule without faults.
func (p *Proxy) AddRule(r Rule) {
	if len(r.Faults) == 0 {
		panic("faultproxy: rule " + r.Name + " has no faults")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &ruleState{Rule: r})
}

// ClearRules removes every rule; requests are forwarded untouched again.
func (p *Proxy) ClearRules() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
	clear(p.inARow)
}

// SetGone switches "server gone" on or off. While gone, every new
// connection is reset right after it is accepted and every new request on
// an open connection is reset; requests already forwarded complete.
func (p *Proxy) SetGone(gone bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = gone
}

// Gone reports whether the proxy is in "server gone" mode.
func (p *Proxy) Gone() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gone
}

// Injected returns how many faults the named rule injected.
func (p *Proxy) Injected(rule string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if r.Name == rule {
			return r.injected
		}
	}
	return 0
}

// Log returns every request seen so far, in the order they were answered.
func (p *Proxy) Log() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log)
}

// RefusedConnections returns how many connections were reset at accept
// because the proxy was gone.
func (p *Proxy) RefusedConnections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// Kubeconfig returns a kubeconfig whose only context, "faultproxy", points
// at the proxy, trusts its certificate and authenticates as user.
func (p *Proxy) Kubeconfig(user *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	c := clientcmdapi.NewConfig()
	c.Clusters["faultproxy"] = &clientcmdapi.Cluster{Server: p.URL, CertificateAuthorityData: p.CAData}
	c.AuthInfos["faultproxy"] = user
	c.Contexts["faultproxy"] = &clientcmdapi.Context{Cluster: "faultproxy", AuthInfo: "faultproxy"}
	c.CurrentContext = "faultproxy"
	return c
}

// WriteKubeconfig writes Kubeconfig(user) to path (mode 0600).
func (p *Proxy) WriteKubeconfig(path string, user *clientcmdapi.AuthInfo) error {
	if err := clientcmd.WriteToFile(*p.Kubeconfig(user), path); err != nil {
		return fmt.Errorf("write the proxy's kubeconfig %s: %w", path, err)
	}
	return nil
}

// decide picks the fault for r (ok false: forward untouched) and records
// the in-a-row count of its method, path and query.
func (p *Proxy) decide(r *http.Request, target string) (string, Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := r.Method + " " + target
	watch := isWatch(r)
	for _, rs := range p.rules {
		if len(rs.Methods) > 0 && !slices.Contains(rs.Methods, r.Method) {
			continue
		}
		if rs.Path != nil && !rs.Path.MatchString(target) {
			continue
		}
		if rs.ExceptPath != nil && rs.ExceptPath.MatchString(target) {
			continue
		}
		if rs.WatchOnly && !watch {
			continue
		}
		rs.seen++
		if rs.seen <= rs.Skip || (rs.Count > 0 && rs.injected >= rs.Count) ||
			(rs.MaxInARow > 0 && p.inARow[key] >= rs.MaxInARow) ||
			(rs.Probability > 0 && rs.Probability < 1 && p.rng.Float64() >= rs.Probability) {
			continue
		}
		rs.injected++
		p.inARow[key]++
		return rs.Name, rs.Faults[p.rng.IntN(len(rs.Faults))], true
	}
	delete(p.inARow, key)
	return "", Fault{}, false
}

func (p *Proxy) record(e Entry) {
	e.End = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, e)
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	target := r.URL.Path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	e := Entry{Time: time.Now(), Method: r.Method, Path: target}
	if p.Gone() {
		e.Gone = true
		p.record(e)
		resetConn(w)
		return
	}
	name, f, ok := p.decide(r, target)
	if ok {
		e.Rule, e.Fault = name, f
	}
	switch {
	case !ok, f.Kind == Delay, f.Kind == DropWatch:
		if f.Kind == Delay {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				p.record(e)
				return
			case <-p.closing:
				p.record(e)
				resetConn(w)
				return
			}
		}
		cut := time.Duration(0)
		if f.Kind == DropWatch {
			cut = f.Delay
		}
		e.Upstream, e.ResourceVersion = p.forward(w, r, cut)
		p.record(e)
	case f.Kind == Status:
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.RetryAfter.Seconds()))))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Code)
		_, _ = w.Write(statusBody(f.Code))
		p.record(e)
	case f.Kind == Reset:
		p.record(e)
		resetConn(w)
	case f.Kind == GoneForGood:
		p.SetGone(true)
		e.Gone = true
		p.record(e)
		resetConn(w)
	case f.Kind == LoseResponse:
		e.Upstream, e.ResourceVersion = p.forward(discardWriter{}, r, 0)
		p.record(e)
		resetConn(w)
	}
}

// forward sends r upstream and copies the answer to w, streaming watches
// and cutting them after cut when it is positive. It returns the upstream
// status (0 when the transport failed) and, for a mutating request, the
// resourceVersion of the object in the answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, cut time.Duration) (int, string) {
	ctx := r.Context()
	if cut > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cut)
		defer cancel()
	}
	out := r.Clone(ctx)
	out.RequestURI = ""
	out.Host = ""
	out.URL.Scheme, out.URL.Host = p.upstream.Scheme, p.upstream.Host
	for _, h := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		out.Header.Del(h)
	}
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return 0, ""
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if isWatch(r) {
		fl, _ := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return resp.StatusCode, ""
				}
				if fl != nil {
					fl.Flush()
				}
			}
			if err != nil {
				if cut > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
					// Drop the watch the way a failing server or load
					// balancer does: the stream just breaks.
					panic(http.ErrAbortHandler)
				}
				return resp.StatusCode, ""
			}
		}
	}
	body, _ := io.ReadAll(resp.Body)
	_, _ = w.Write(body)
	rv := ""
	if resp.StatusCode/100 == 2 && r.Method != http.MethodGet && r.Method != http.MethodHead {
		var m struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if json.Unmarshal(body, &m) == nil {
			rv = m.Metadata.ResourceVersion
		}
	}
	return resp.StatusCode, rv
}

// statusBody is a metav1.Status for an injected error status, so that
// client-go reads it as the API server's own.
func statusBody(code int) []byte {
	reason := map[int]string{429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}[code]
	b, _ := json.Marshal(map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
		"message": fmt.Sprintf("faultproxy: injected %d %s", code, http.StatusText(code)),
	})
	return b
}

func isWatch(r *http.Request) bool {
	w := r.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

// resetConn hijacks the connection of w and closes it with a TCP RST.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	rst(conn)
}

// rst closes conn (TLS or plain TCP) with SO_LINGER 0, so the peer sees a
// reset rather than an orderly close.
func rst(conn net.Conn) {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// goneListener resets connections at accept while the proxy is gone.
type goneListener struct {
	net.Listener
	p *Proxy
}

func (l *goneListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.p.mu.Lock()
		gone := l.p.gone
		if gone {
			l.p.refused++
		} else {
			l.p.accepted++
		}
		l.p.mu.Unlock()
		if !gone {
			return c, nil
		}
		rst(c)
	}
}

// discardWriter is a ResponseWriter that drops the answer (LoseResponse).
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
