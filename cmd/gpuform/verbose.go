package main

import (
	"net/http"
	"time"

	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

// kubeTransport is the transport wrapper of every Kubernetes client gpuform
// builds (plan, apply, drift, force-unlock, inventory, the agent): the
// tests' wrapTransport and, at -v 1 or more, the request log on standard
// error (kubernetes.LogRequests: credentials redacted, bodies never
// printed). nil when there is neither. client-go's own logging (klog, and
// with it its curl-line debug transport) stays off at every level: main
// discards it.
func (g *globals) kubeTransport() func(http.RoundTripper) http.RoundTripper {
	return kubernetes.WrapWithLog(g.wrapTransport, g.stderr, g.verbosity)
}

// phase logs, at -v 1 or more, how long a phase of the pipeline took
// (load, compile, refresh, diff).
func (g *globals) phase(name string, elapsed time.Duration) {
	if g.verbosity >= 1 {
		textsafe.Fprintf(g.stderr, "time: %s %s\n", name, elapsed.Round(time.Millisecond))
	}
}
