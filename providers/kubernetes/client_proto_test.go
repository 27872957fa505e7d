package kubernetes

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestClientSpeaksHTTP1 checks that the client talks HTTP/1.1 to a server
// that offers HTTP/2 too, unless the configuration asks for other
// protocols.
func TestClientSpeaksHTTP1(t *testing.T) {
	var mu sync.Mutex
	var protos []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.Proto)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	tests := []struct {
		name       string
		nextProtos []string
		want       string
	}{
		{"default", nil, "HTTP/1.1"},
		{"the configuration's choice", []string{"h2", "http/1.1"}, "HTTP/2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			protos = nil
			mu.Unlock()
			cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true, NextProtos: tt.nextProtos}}
			c, err := NewForConfig(cfg, "test", Options{})
			if err != nil {
				t.Fatal(err)
			}
			_ = c.typed.Discovery().RESTClient().Get().AbsPath("/version").Do(context.Background()).Error()
			mu.Lock()
			defer mu.Unlock()
			if len(protos) == 0 {
				t.Fatal("no request reached the server")
			}
			for _, p := range protos {
				if p != tt.want {
					t.Fatalf("request over %s, want %s", p, tt.want)
				}
			}
		})
	}
}

// TestClientReusesConnections checks that 40 requests in flight at once,
// twice, open 40 connections in all: the second round reuses the first's
// (client-go alone keeps 25 idle, so 15 more would be opened, each with a
// TLS handshake).
func TestClientReusesConnections(t *testing.T) {
	var conns atomic.Int32
	release := make(chan struct{})
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	c, err := NewForConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "test", Options{})
	if err != nil {
		t.Fatal(err)
	}
	const inFlight = 40
	for round := range 2 {
		arrived.Add(inFlight)
		var done sync.WaitGroup
		for range inFlight {
			done.Go(func() {
				_ = c.typed.Discovery().RESTClient().Get().AbsPath("/version").Do(context.Background()).Error()
			})
		}
		arrived.Wait() // all 40 in flight at once
		for range inFlight {
			release <- struct{}{}
		}
		done.Wait()
		if got := conns.Load(); got != inFlight {
			t.Fatalf("after round %d: %d connections opened, want %d", round+1, got, inFlight)
		}
	}
}

// TestClientResumesTLSSessions checks that, once one request has made a
// full TLS handshake, the connections opened for requests in flight at
// once resume its session instead of each making a full handshake (a
// signature with the client's and the server's keys each), unless the
// client certificate can rotate: a resumed session would keep the old
// certificate's identity past client-go's rotation.
func TestClientResumesTLSSessions(t *testing.T) {
	certFile, keyFile := writeClientCert(t)
	const inFlight = 8
	tests := []struct {
		name      string
		tls       rest.TLSClientConfig
		exec      bool
		wantFulls int
	}{
		{"no client certificate", rest.TLSClientConfig{Insecure: true}, false, 1},
		{"certificate data in the kubeconfig", rest.TLSClientConfig{Insecure: true, CertData: readFile(t, certFile), KeyData: readFile(t, keyFile)}, false, 1},
		{"certificate files, reloaded when rotated", rest.TLSClientConfig{Insecure: true, CertFile: certFile, KeyFile: keyFile}, false, inFlight},
		{"exec credential plugin", rest.TLSClientConfig{Insecure: true}, true, inFlight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &rest.Config{Host: "", TLSClientConfig: tt.tls}
			if tt.exec {
				cfg.ExecProvider = &clientcmdapi.ExecConfig{Command: "sh", Args: []string{"-c", execCredential}, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
			}
			if got := fullHandshakes(t, cfg, inFlight); got != tt.wantFulls {
				t.Fatalf("%d of %d connections made a full TLS handshake, want %d", got, inFlight, tt.wantFulls)
			}
		})
	}
}

// execCredential is a credential plugin's command printing a token.
const execCredential = `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'`

// fullHandshakes sends one request through a client of cfg (its Host set
// to a test server's), then inFlight at once, and returns how many of the
// connections they took made a full TLS handshake.
func fullHandshakes(t *testing.T, cfg *rest.Config, inFlight int) int {
	t.Helper()
	var mu sync.Mutex
	full := map[string]bool{} // remote address: a full handshake, not resumed
	release := make(chan struct{})
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if _, seen := full[r.RemoteAddr]; !seen {
			full[r.RemoteAddr] = !r.TLS.DidResume
		}
		mu.Unlock()
		if r.URL.Path == "/version" {
			arrived.Done()
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	srv.StartTLS()
	defer srv.Close()
	cfg.Host = srv.URL
	c, err := NewForConfig(cfg, "test", Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) error {
		return c.typed.Discovery().RESTClient().Get().AbsPath(path).Do(context.Background()).Error()
	}
	if err := get("/healthz"); err != nil { // the first connection: a full handshake
		t.Fatal(err)
	}
	arrived.Add(inFlight)
	var done sync.WaitGroup
	for range inFlight {
		done.Go(func() {
			if err := get("/version"); err != nil {
				t.Error(err)
			}
		})
	}
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	select {
	case <-all: // all in flight at once: the first's connection and more
	case <-time.After(30 * time.Second):
		t.Fatal("the requests did not all reach the server")
	}
	for range inFlight {
		release <- struct{}{}
	}
	done.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(full) != inFlight {
		t.Fatalf("%d connections, want %d", len(full), inFlight)
	}
	fulls := 0
	for _, f := range full {
		if f {
			fulls++
		}
	}
	return fulls
}

// writeClientCert writes a self-signed client certificate and its key as
// PEM files and returns their paths.
func writeClientCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tenant-admin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
