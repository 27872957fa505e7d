package kubernetes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
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
