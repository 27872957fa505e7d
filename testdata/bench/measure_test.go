package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
