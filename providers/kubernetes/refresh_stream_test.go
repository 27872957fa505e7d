package kubernetes

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestListRereadsBrokenBody checks that a LIST response whose connection
// breaks while its body streams is read again (the transport retries only
// failures before the response), and that a malformed one is not.
func TestListRereadsBrokenBody(t *testing.T) {
	const list = `{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`
	for _, tt := range []struct {
		name      string
		first     string // the first response's body; "" breaks it off
		wantItems int
		wantReqs  int32
		wantErr   string
	}{
		{"broken mid-body, read again", "", 2, 2, ""},
		{"malformed, not read again", `{"items":[{"metadata":{"name":"a"}},]}`, 0, 1, "decode Namespace list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var reqs atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Has("limit") {
					t.Errorf("request %s is paginated", r.URL)
				}
				w.Header().Set("Content-Type", "application/json")
				if reqs.Add(1) > 1 {
					_, _ = w.Write([]byte(list))
					return
				}
				if tt.first != "" {
					_, _ = w.Write([]byte(tt.first))
					return
				}
				w.Header().Set("Content-Length", "1000")
				_, _ = w.Write([]byte(list[:60]))
				w.(http.Flusher).Flush()
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			}))
			defer srv.Close()
			typed, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			c := &Client{typed: typed}
			m := &meta.RESTMapping{
				Resource:         schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
				GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
			}
			items, err := c.list(t.Context(), m, metav1.ListOptions{})
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if len(items) != tt.wantItems || reqs.Load() != tt.wantReqs {
				t.Errorf("%d items in %d requests, want %d in %d", len(items), reqs.Load(), tt.wantItems, tt.wantReqs)
			}
		})
	}
}
