package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// collect asks the API server for its heap profile after a collection
// (gc=1), and reports a server that does not serve it.
func TestCollect(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		wantErr string
	}{
		{"profiling on", http.StatusOK, ""},
		{"profiling off", http.StatusNotFound, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = append(asked, r.URL.RequestURI())
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			err := collect(context.Background(), &rest.Config{Host: srv.URL})
			if len(asked) != 1 || asked[0] != "/debug/pprof/heap?gc=1" {
				t.Errorf("asked %q, want one GET /debug/pprof/heap?gc=1", asked)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("collect: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("collect: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// settle returns once the process has been idle idleSeconds seconds in a
// row: not while it works, nor at its first idle second.
func TestSettleWaitsForIdleSeconds(t *testing.T) {
	const busy = 2 * time.Second
	done := make(chan struct{})
	go func() {
		defer close(done)
		for end := time.Now().Add(busy); time.Now().Before(end); {
		}
	}()
	waited := settle(t.Context(), os.Getpid())
	<-done
	// Returned at its first idle second, it would have waited about busy
	// and one second.
	if want := busy + 2*time.Second; waited < want {
		t.Errorf("settle returned after %v, while the process was busy %v and then idle: want at least %v", waited, busy, want)
	}
}
