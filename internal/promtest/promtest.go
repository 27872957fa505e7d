// Package promtest runs a real Prometheus server for tests, on a history
// backfilled with promtool from OpenMetrics text: bin/prometheus and
// bin/promtool, built by `make prometheus` from the module pinned in
// testdata/prometheus (or $PROMETHEUS_BIN and $PROMTOOL_BIN).
package promtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Binary is $<env>, else bin/<name> at the repository root.
func Binary(env, name string) string {
	if b := os.Getenv(env); b != "" {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bin", name)
}

// Options say how to serve.
type Options struct {
	// WebConfig is the text of Prometheus's --web.config.file (TLS and
	// basic auth); empty for plain http without authentication. Files it
	// names are relative to Dir.
	WebConfig string
	// TLS is true when WebConfig turns https on.
	TLS bool
}

// Server is a running Prometheus.
type Server struct {
	// URL is its base URL.
	URL string
	// Dir holds its data, configuration and log.
	Dir string
}

// Start backfills openMetrics (OpenMetrics text ending in "# EOF") into a
// new TSDB under dir with promtool, starts Prometheus on it with no scrape
// targets and waits until it is ready. The server stops when the test ends.
func Start(t *testing.T, dir string, openMetrics []byte, o Options) *Server {
	t.Helper()
	prom, tool := Binary("PROMETHEUS_BIN", "prometheus"), Binary("PROMTOOL_BIN", "promtool")
	for _, b := range []string{prom, tool} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%s is missing: run `make test` (or `make prometheus`) to build it: %v", b, err)
		}
	}
	data := filepath.Join(dir, "data")
	input := filepath.Join(dir, "history.om")
	must(t, os.WriteFile(input, openMetrics, 0o600))
	if out, err := exec.Command(tool, "tsdb", "create-blocks-from", "openmetrics", input, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte("global:\n  evaluation_interval: 1m\nscrape_configs: []\n"), 0o600))
	addr := freeAddr(t)
	args := []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + data,
		"--storage.tsdb.retention.time=100y",
		"--web.listen-address=" + addr,
		"--query.lookback-delta=5m",
	}
	scheme := "http"
	if o.WebConfig != "" {
		must(t, os.WriteFile(filepath.Join(dir, "web.yml"), []byte(o.WebConfig), 0o600))
		args = append(args, "--web.config.file="+filepath.Join(dir, "web.yml"))
	}
	if o.TLS {
		scheme = "https"
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	must(t, err)
	cmd := exec.Command(prom, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
	})
	s := &Server{URL: scheme + "://" + addr, Dir: dir}
	if err := waitReady(s.URL, 90*time.Second); err != nil {
		b, _ := os.ReadFile(log.Name())
		t.Fatalf("Prometheus did not get ready: %v\n%s", err, b)
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().String()
}

// waitReady polls /-/ready; any answer from the server, even 401, means it
// serves.
func waitReady(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // readiness probe of a test server
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/-/ready", nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/-/ready: %v", url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
