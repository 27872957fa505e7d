package kubernetes

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
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
// signature with the client's and the server's keys each).
func TestClientResumesTLSSessions(t *testing.T) {
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
	c, err := NewForConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "test", Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) {
		_ = c.typed.Discovery().RESTClient().Get().AbsPath(path).Do(context.Background()).Error()
	}
	get("/healthz") // the first connection: a full handshake
	const inFlight = 8
	arrived.Add(inFlight)
	var done sync.WaitGroup
	for range inFlight {
		done.Go(func() { get("/version") })
	}
	arrived.Wait() // all in flight at once: the first's connection and 7 more
	for range inFlight {
		release <- struct{}{}
	}
	done.Wait()
	mu.Lock()
	defer mu.Unlock()
	fulls := 0
	for _, f := range full {
		if f {
			fulls++
		}
	}
	if len(full) != inFlight || fulls != 1 {
		t.Fatalf("%d connections, %d of them with a full TLS handshake; want %d connections, 1 full handshake", len(full), fulls, inFlight)
	}
}
