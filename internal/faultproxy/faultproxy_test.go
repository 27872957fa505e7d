package faultproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// backend is a stand-in API server: it counts requests, echoes the
// Authorization header, answers mutating requests with an object carrying
// a resourceVersion, and streams a watch until the client goes away.
type backend struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{}
	b.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		w.Header().Set("X-Auth", r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			fl := w.(http.Flusher)
			for i := 0; ; i++ {
				if _, err := fmt.Fprintf(w, `{"type":"ADDED","object":{"n":%d}}`+"\n", i); err != nil {
					return
				}
				fl.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		if r.Method != http.MethodGet {
			_, _ = io.Copy(io.Discard, r.Body)
			fmt.Fprint(w, `{"kind":"Namespace","metadata":{"name":"x","resourceVersion":"42"}}`)
			return
		}
		fmt.Fprint(w, `{"kind":"Status","ok":true}`)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// newProxy starts a proxy in front of b, trusting b's certificate and
// sending no credentials of its own.
func newProxy(t *testing.T, b *backend) *Proxy {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.srv.Certificate().Raw})
	p, err := New(&rest.Config{Host: b.srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// client trusts the proxy's certificate and keeps no idle connections, so
// that every request opens a new one (gone mode refuses at accept).
func client(t *testing.T, p *Proxy) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.CAData) {
		t.Fatal("the proxy's CAData is not a PEM certificate")
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
}

func do(c *http.Client, method, url string) (*http.Response, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(`{}`))
	if err != nil {
		return nil, "", err
	}
	if method == http.MethodGet {
		req.Body, req.ContentLength = nil, 0
	}
	req.Header.Set("Authorization", "Bearer secret-token")
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		fault  Fault
		method string
		// wantCode is the status the client gets; 0 means a connection error.
		wantCode       int
		wantRetryAfter string
		// wantHits is how many requests reached the backend.
		wantHits int64
		minTime  time.Duration
	}{
		{name: "429 with Retry-After", fault: Fault{Kind: Status, Code: 429, RetryAfter: 1500 * time.Millisecond}, method: "PATCH", wantCode: 429, wantRetryAfter: "2"},
		{name: "500", fault: Fault{Kind: Status, Code: 500}, method: "GET", wantCode: 500},
		{name: "503", fault: Fault{Kind: Status, Code: 503}, method: "DELETE", wantCode: 503},
		{name: "reset", fault: Fault{Kind: Reset}, method: "PATCH"},
		{name: "delay", fault: Fault{Kind: Delay, Delay: 300 * time.Millisecond}, method: "GET", wantCode: 200, wantHits: 1, minTime: 300 * time.Millisecond},
		{name: "lost response", fault: Fault{Kind: LoseResponse}, method: "PATCH", wantHits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t)
			p := newProxy(t, b)
			p.AddRule(Rule{Name: "r", Faults: []Fault{tt.fault}})
			start := time.Now()
			resp, body, err := do(client(t, p), tt.method, p.URL+"/api/v1/namespaces/x")
			elapsed := time.Since(start)
			switch {
			case tt.wantCode == 0:
				if err == nil {
					t.Fatalf("got %d %s, want a connection error", resp.StatusCode, body)
				}
				if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("error %v is not a reset connection", err)
				}
			case err != nil:
				t.Fatal(err)
			case resp.StatusCode != tt.wantCode:
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantCode)
			}
			if tt.wantCode >= 400 && !strings.Contains(body, `"kind":"Status"`) {
				t.Errorf("an injected error is not a metav1.Status: %s", body)
			}
			if tt.wantRetryAfter != "" && resp.Header.Get("Retry-After") != tt.wantRetryAfter {
				t.Errorf("Retry-After %q, want %q", resp.Header.Get("Retry-After"), tt.wantRetryAfter)
			}
			if got := b.hits.Load(); got != tt.wantHits {
				t.Errorf("backend saw %d requests, want %d", got, tt.wantHits)
			}
			if elapsed < tt.minTime {
				t.Errorf("answered after %s, want at least %s", elapsed, tt.minTime)
			}
			log := p.Log()
			if len(log) != 1 || log[0].Rule != "r" || log[0].Fault.Kind != tt.fault.Kind || log[0].Method != tt.method {
				t.Fatalf("log %+v, want one entry for rule r", log)
			}
			if tt.fault.Kind == LoseResponse && (log[0].Upstream != 200 || log[0].ResourceVersion != "42") {
				t.Errorf("a lost response was not recorded as handled upstream: %+v", log[0])
			}
			if p.Injected("r") != 1 {
				t.Errorf("Injected = %d, want 1", p.Injected("r"))
			}
		})
	}
}

func TestForwardsUntouched(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	p.AddRule(Rule{Name: "only-deletes", Methods: []string{"DELETE"}, Faults: []Fault{{Kind: Status, Code: 500}}})
	p.AddRule(Rule{Name: "only-leases", Path: regexp.MustCompile(`/leases/`), Faults: []Fault{{Kind: Status, Code: 500}}})
	resp, body, err := do(client(t, p), "PATCH", p.URL+"/api/v1/namespaces/x?fieldManager=gpuform")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.Contains(body, `"resourceVersion":"42"`) {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Auth"); got != "Bearer secret-token" {
		t.Errorf("the client's credentials did not pass through: backend saw %q", got)
	}
	log := p.Log()
	if len(log) != 1 || log[0].Rule != "" || log[0].Upstream != 200 || log[0].ResourceVersion != "42" ||
		log[0].Path != "/api/v1/namespaces/x?fieldManager=gpuform" || !log[0].Forwarded() || !log[0].Mutating() {
		t.Errorf("log %+v", log)
	}
}

// A rule with ExceptPath leaves the requests it matches to the rules after
// it, and faults the others.
func TestExceptPath(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	leases := regexp.MustCompile(`/leases/`)
	p.AddRule(Rule{Name: "not-leases", ExceptPath: leases, Faults: []Fault{{Kind: Status, Code: 500}}})
	p.AddRule(Rule{Name: "leases", Path: leases, Faults: []Fault{{Kind: Status, Code: 503}}})
	tests := []struct {
		path string
		rule string
		code int
	}{
		{"/api/v1/namespaces/x", "not-leases", 500},
		{"/apis/coordination.k8s.io/v1/namespaces/gpuform-system/leases/gpuform-x", "leases", 503},
	}
	c := client(t, p)
	for _, tt := range tests {
		resp, _, err := do(c, "PUT", p.URL+tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.code {
			t.Errorf("%s: status %d, want %d", tt.path, resp.StatusCode, tt.code)
		}
	}
	for i, e := range p.Log() {
		if e.Rule != tests[i].rule {
			t.Errorf("%s: faulted by %q, want %q", e.Path, e.Rule, tests[i].rule)
		}
	}
}

func TestRuleCounting(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		// paths are requested in order; want is, for each, whether it failed.
		paths []string
		want  string
	}{
		{"skip then count", Rule{Skip: 2, Count: 3}, strings.Split("a a a a a a a", " "), "..xxx.."},
		{"at most two in a row per path", Rule{MaxInARow: 2}, strings.Split("a a a a a b b a", " "), "xx.xxxx."},
		{"method filter", Rule{Methods: []string{"POST"}}, strings.Split("a a", " "), ".."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t)
			p := newProxy(t, b)
			tt.rule.Name = "r"
			tt.rule.Faults = []Fault{{Kind: Status, Code: 503}}
			p.AddRule(tt.rule)
			c := client(t, p)
			var got strings.Builder
			for _, path := range tt.paths {
				resp, _, err := do(c, "GET", p.URL+"/"+path)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode == 503 {
					got.WriteByte('x')
				} else {
					got.WriteByte('.')
				}
			}
			if got.String() != tt.want {
				t.Errorf("faults %s, want %s", got.String(), tt.want)
			}
		})
	}
}

func TestProbability(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	p.AddRule(Rule{Name: "r", Probability: 0.3, Faults: []Fault{{Kind: Status, Code: 500}, {Kind: Status, Code: 503}}})
	const n = 4000
	codes := map[int]int{}
	for i := range n {
		req := httptest.NewRequest("GET", fmt.Sprintf("/p/%d", i), nil)
		if _, f, ok := p.decide(req, req.URL.Path); ok {
			codes[f.Code]++
		}
	}
	injected := codes[500] + codes[503]
	if frac := float64(injected) / n; frac < 0.27 || frac > 0.33 {
		t.Errorf("injected into %.3f of requests, want 0.3±0.03", frac)
	}
	if codes[500] < injected/3 || codes[503] < injected/3 {
		t.Errorf("faults are not drawn from both: %v", codes)
	}
	if p.Injected("r") != injected {
		t.Errorf("Injected = %d, want %d", p.Injected("r"), injected)
	}
}

func TestDropWatch(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	p.AddRule(Rule{Name: "drop", WatchOnly: true, Faults: []Fault{{Kind: DropWatch, Delay: 300 * time.Millisecond}}})
	c := client(t, p)
	c.Timeout = 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.URL+"/api/v1/nodes?watch=true", nil)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the watch ended cleanly after %s; want it cut", time.Since(start))
	}
	if ctx.Err() != nil {
		t.Fatal("the watch was not cut before the test's deadline")
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("the watch was cut after %s, before its 300ms", el)
	}
	if !strings.Contains(string(body), `"type":"ADDED"`) {
		t.Errorf("no events streamed before the cut: %q", body)
	}
	// A plain GET is not a watch: untouched.
	if resp, _, err := do(c, "GET", p.URL+"/api/v1/nodes"); err != nil || resp.StatusCode != 200 {
		t.Errorf("plain GET: %v", err)
	}
}

func TestGone(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	p.AddRule(Rule{Name: "die", Skip: 2, Faults: []Fault{{Kind: GoneForGood}}})
	for i := range 2 {
		if resp, _, err := do(c, "GET", p.URL+"/ok"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("request %d before the server went: %v", i, err)
		}
	}
	for i := range 3 {
		if _, _, err := do(c, "GET", p.URL+"/gone"); err == nil {
			t.Fatalf("request %d after the server went got an answer", i)
		}
	}
	if !p.Gone() {
		t.Fatal("GoneForGood did not switch the proxy to gone")
	}
	if p.RefusedConnections() < 2 {
		t.Errorf("refused %d connections at accept, want at least 2", p.RefusedConnections())
	}
	if got := b.hits.Load(); got != 2 {
		t.Errorf("backend saw %d requests, want 2", got)
	}
	p.SetGone(false)
	p.ClearRules()
	if resp, _, err := do(c, "GET", p.URL+"/back"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after SetGone(false): %v", err)
	}
}

func TestKubeconfig(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.WriteKubeconfig(path, &clientcmdapi.AuthInfo{Token: "kube-token"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(p.URL + "/version")
	if err != nil {
		t.Fatalf("a client of the written kubeconfig cannot reach the proxy: %v", err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Auth"); got != "Bearer kube-token" {
		t.Errorf("backend saw Authorization %q, want the kubeconfig's token", got)
	}
}

func TestCloseEndsDelays(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	p.AddRule(Rule{Name: "hang", Faults: []Fault{{Kind: Delay, Delay: time.Hour}}})
	errc := make(chan error, 1)
	go func() {
		_, _, err := do(client(t, p), "GET", p.URL+"/hang")
		errc <- err
	}()
	for len(p.Log()) == 0 && p.Injected("hang") == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	p.Close()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Close took %s with a delayed request", el)
	}
	if err := <-errc; err == nil {
		t.Error("the delayed request got an answer from a closed proxy")
	}
}
