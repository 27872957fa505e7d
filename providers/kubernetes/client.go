// Package kubernetes is gpuform's Kubernetes provider: it reads the live
// state with one LIST per kind, applies objects with server-side apply and
// deletes what the stack no longer declares, through client-go.
package kubernetes

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Options say which cluster to talk to and how hard.
type Options struct {
	// Kubeconfig is an explicit kubeconfig path (--kubeconfig, else the
	// cluster block); empty means $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string
	// Context is the kubeconfig context (--context, else the cluster
	// block); empty means the kubeconfig's current context.
	Context string
	// QPS and Burst bound the client's request rate. Zero QPS means no
	// client-side limit: gpuform bounds its requests by how many are in
	// flight (apply's parallelism, refresh's one LIST per kind) and leaves
	// shedding load to the API server's Priority and Fairness, whose 429s it
	// honours: a client-side rate caps large applies below what the server
	// can take.
	QPS   float32
	Burst int
	// Timeout bounds every single request; zero means 60s.
	Timeout time.Duration
	// WrapTransport wraps the HTTP transport (request counting in tests).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// PageSize is the LIST page size; zero reads each kind in one LIST
	// (streamed and decoded as it arrives, so no page is held whole).
	PageSize int64
}

// Client talks to one Kubernetes API server.
type Client struct {
	rest     *rest.Config
	typed    kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface
	mapper   meta.RESTMapper
	pageSize int64
	// keepWhole makes Refresh settle nothing (engine.Settler): every
	// object of the stack is kept whole, as before settling (tests
	// compare the two).
	keepWhole bool
	// prefetched holds the stack's LISTs that Prefetch started, until
	// Refresh takes them.
	prefetchMu sync.Mutex
	prefetched *stackLists
	// Server and Context describe the cluster for messages.
	Server  string
	Context string
}

// New builds a client from kubeconfig, in kubectl's precedence order:
// opts.Kubeconfig, $KUBECONFIG, ~/.kube/config; opts.Context, then the
// current context. NewClient with Resolve also weighs the cluster block,
// a saved plan and the pod's service account.
func New(opts Options) (*Client, error) {
	return NewClient(Target{Kubeconfig: opts.Kubeconfig, Context: opts.Context}, opts)
}

// idleConnsPerHost is how many idle connections to the API server an
// HTTP/1.1 client keeps for reuse: one per request in flight at any
// parallelism a user sets. client-go keeps 25, past which every request
// would open a connection, with its TLS handshake, and close it after.
const idleConnsPerHost = 256

// tlsSessions is how many TLS sessions a client keeps for resumption, one
// per server name: a client talks to one server, so a few are plenty.
const tlsSessions = 8

// keepIdleConns gives client-go's HTTP/1.1 transport its own connection
// pool that keeps idleConnsPerHost idle connections: a copy, since
// client-go shares its transports between clients of the same
// configuration. The copy keeps client-go's transport alive with it, whose
// collection would stop the rotation of a client certificate read from a
// file.
//
// With resume, the copy also resumes TLS sessions: the connections a
// refresh opens for the LISTs it sends at once resume the session of an
// earlier connection (discovery's) instead of each making a full handshake,
// with a signature by the client's key and one by the server's
// (resumeTLS says when).
func keepIdleConns(rt http.RoundTripper, resume bool) http.RoundTripper {
	base := rt
	for {
		w, ok := base.(utilnet.RoundTripperWrapper)
		if !ok {
			break
		}
		base = w.WrappedRoundTripper()
	}
	t, ok := base.(*http.Transport)
	if !ok || t.MaxIdleConnsPerHost >= idleConnsPerHost {
		return rt
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = idleConnsPerHost
	if resume && t.TLSClientConfig != nil && t.TLSClientConfig.ClientSessionCache == nil {
		t.TLSClientConfig = t.TLSClientConfig.Clone()
		t.TLSClientConfig.ClientSessionCache = tls.NewLRUClientSessionCache(tlsSessions)
	}
	return &pooled{Transport: t, shared: rt}
}

// resumeTLS reports whether a client of cfg may resume TLS sessions: when
// its client certificate, if any, cannot change while it runs. A resumed
// session keeps the identity of the certificate its full handshake
// presented, so a certificate read from files (which client-go reloads
// when rotated, closing the connections of the old one) or handed by a
// credential plugin would live on in resumed sessions after it was
// replaced. The API server still checks the certificate of a resumed
// session on every request, and Go's server resumes none whose client
// certificate has expired.
func resumeTLS(cfg *rest.Config) bool {
	return cfg.CertFile == "" && cfg.KeyFile == "" && cfg.ExecProvider == nil && cfg.AuthProvider == nil
}

// pooled is a copy of client-go's transport with its own connection pool.
type pooled struct {
	*http.Transport
	shared http.RoundTripper // kept alive, see keepIdleConns
}

// NewForConfig builds a client from a rest.Config.
func NewForConfig(cfg *rest.Config, contextName string, opts Options) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if cfg.QPS == 0 {
		cfg.QPS = -1 // client-go: no rate limiter
	}
	cfg.Timeout = opts.Timeout
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	cfg.UserAgent = "gpuform"
	if len(cfg.TLSClientConfig.NextProtos) == 0 {
		// HTTP/1.1, a connection per request in flight (up to the
		// parallelism), instead of HTTP/2 streams on one connection: for
		// thousands of small writes it costs both ends less CPU than
		// HTTP/2's flow control and stream bookkeeping. A NextProtos the
		// configuration sets is kept.
		cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
		resume := resumeTLS(cfg)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return keepIdleConns(rt, resume) })
	}
	// Innermost, so that wrappers (request counting, -v logs) see each
	// read once however often it was retried.
	cfg.Wrap(retryReads)
	if opts.WrapTransport != nil {
		cfg.Wrap(opts.WrapTransport)
	}
	// One HTTP client shared by every typed, dynamic and metadata client,
	// so they share connections.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build HTTP client for %s: %w", cfg.Host, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build discovery client for %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build dynamic client for %s: %w", cfg.Host, err)
	}
	typed, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client for %s: %w", cfg.Host, err)
	}
	md, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build metadata client for %s: %w", cfg.Host, err)
	}
	page := opts.PageSize
	return &Client{
		rest:     cfg,
		typed:    typed,
		dynamic:  dyn,
		metadata: md,
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		pageSize: page,
		Server:   cfg.Host,
		Context:  contextName,
	}, nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

func kubeconfigName(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	if len(rules.Precedence) > 0 {
		return strings.Join(rules.Precedence, string(os.PathListSeparator))
	}
	return "(none)"
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
