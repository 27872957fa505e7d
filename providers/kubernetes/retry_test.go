package kubernetes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestRetryReads(t *testing.T) {
	tests := []struct {
		name   string
		method string
		// answers are the statuses the server gives in turn (then 200).
		answers    []int
		retryAfter string
		wantStatus int
		wantCalls  int
		minGap     time.Duration
	}{
		{name: "GET retried through 500 and 503", method: "GET", answers: []int{500, 503}, wantStatus: 200, wantCalls: 3},
		{name: "429 Retry-After honoured", method: "GET", answers: []int{429}, retryAfter: "1", wantStatus: 200, wantCalls: 2, minGap: time.Second},
		{name: "PATCH not retried", method: "PATCH", answers: []int{503}, wantStatus: 503, wantCalls: 1},
		{name: "404 not retried", method: "GET", answers: []int{404}, wantStatus: 404, wantCalls: 1},
		{name: "bounded", method: "GET", answers: []int{500, 500, 500, 500, 500, 500, 500, 500, 500}, wantStatus: 500, wantCalls: readAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var times []time.Time
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n := len(times)
				times = append(times, time.Now())
				mu.Unlock()
				if n < len(tt.answers) {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					w.WriteHeader(tt.answers[n])
					return
				}
				w.WriteHeader(200)
			}))
			defer srv.Close()
			req, _ := http.NewRequest(tt.method, srv.URL+"/api/v1/namespaces", nil)
			resp, err := retryReads(http.DefaultTransport).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || len(times) != tt.wantCalls {
				t.Errorf("status %d after %d calls, want %d after %d", resp.StatusCode, len(times), tt.wantStatus, tt.wantCalls)
			}
			for i := 1; i < len(times); i++ {
				if gap := times[i].Sub(times[i-1]); gap < max(tt.minGap, retryBase) {
					t.Errorf("retry %d came %s after the previous try, want at least %s", i, gap, max(tt.minGap, retryBase))
				}
			}
		})
	}
}

func TestRetryReadsStopsWithTheContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	start := time.Now()
	if _, err := retryReads(http.DefaultTransport).RoundTrip(req); err == nil {
		t.Fatal("a read that kept failing until its deadline succeeded")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the read outlived its 300ms context by %s", el)
	}
}
