package kubernetes_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gpuform/gpuform/providers/kubernetes"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The request log at every level: what each level adds, and that no
// credential (bearer token, basic auth, cookie, key headers, URL user
// info) and no body ever reaches it.
func TestLogRequestsRedacts(t *testing.T) {
	const secret = "s3cr3t-m4rk3r-91d2"
	ok := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{Status: "200 OK", StatusCode: 200, ContentLength: 42,
			Header: http.Header{"Content-Type": {"application/json"}, "Set-Cookie": {"session=" + secret}, "Audit-Id": {"a-1"}},
			Body:   io.NopCloser(strings.NewReader(`{"token":"` + secret + `"}`)), Request: r}, nil
	})
	failing := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	})
	request := func() *http.Request {
		r, _ := http.NewRequest("PATCH", "https://admin:"+secret+"@127.0.0.1:6443/api/v1/nodes/n1?fieldManager=gpuform", strings.NewReader(`{"spec":"`+secret+`"}`))
		r.Header.Set("Authorization", "Bearer "+secret)
		r.Header.Set("Proxy-Authorization", "Basic "+secret)
		r.Header.Set("Cookie", "c="+secret)
		r.Header.Set("X-Api-Key", secret)
		r.Header.Set("X-Auth-Token", secret)
		r.Header.Set("Impersonate-User", "alice")
		r.Header.Set("User-Agent", "gpuform")
		return r
	}
	tests := []struct {
		level   int
		rt      http.RoundTripper
		fails   bool
		want    []string
		notWant []string
		lines   int
	}{
		{level: 0, rt: ok, lines: 0},
		{level: 1, rt: ok, want: []string{"api: PATCH /api/v1/nodes/n1 -> 200 OK in "}, notWant: []string{"fieldManager", "Authorization", "127.0.0.1"}, lines: 1},
		{level: 1, rt: failing, fails: true, want: []string{"api: PATCH /api/v1/nodes/n1 -> error after ", "connection refused"}, lines: 1},
		{level: 2, rt: ok, want: []string{"api: PATCH https://admin:xxxxx@127.0.0.1:6443/api/v1/nodes/n1?fieldManager=gpuform -> 200 OK in ", "(42 bytes, application/json)"}, notWant: []string{"Authorization"}, lines: 1},
		{level: 3, rt: ok, want: []string{
			"api:   > Authorization: Bearer (redacted)\n",
			"api:   > Proxy-Authorization: Basic (redacted)\n",
			"api:   > Cookie: (redacted)\n",
			"api:   > X-Api-Key: (redacted)\n",
			"api:   > X-Auth-Token: (redacted)\n",
			"api:   > Impersonate-User: alice\n",
			"api:   > User-Agent: gpuform\n",
			"api:   < Set-Cookie: (redacted)\n",
			"api:   < Audit-Id: a-1\n",
		}, lines: 1 + 7 + 3},
		{level: 3, rt: failing, fails: true, want: []string{"error after", "api:   > Authorization: Bearer (redacted)\n"}, lines: 1 + 7},
		{level: 9, rt: ok, want: []string{"api:   > Authorization: Bearer (redacted)\n"}, lines: 1 + 7 + 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("level %d", tt.level), func(t *testing.T) {
			var log bytes.Buffer
			rt := tt.rt
			if wrap := kubernetes.LogRequests(&log, tt.level); wrap != nil {
				rt = wrap(rt)
			} else if tt.level >= kubernetes.LogRequestLines {
				t.Fatalf("no wrapper at level %d", tt.level)
			}
			resp, err := rt.RoundTrip(request())
			if resp != nil {
				body, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(body), secret) {
					t.Errorf("the wrapper changed the response body: %s", body)
				}
			}
			if (err != nil) != tt.fails {
				t.Fatalf("error %v, want one: %v", err, tt.fails)
			}
			got := log.String()
			if strings.Contains(got, secret) {
				t.Errorf("the secret reached the log:\n%s", got)
			}
			if n := strings.Count(got, "\n"); n != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tt.lines, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("log lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("log has %q at level %d:\n%s", w, tt.level, got)
				}
			}
		})
	}
}

// Lines of concurrent requests never mix: each is written whole.
func TestLogRequestsConcurrentLines(t *testing.T) {
	var log bytes.Buffer
	rt := kubernetes.LogRequests(&log, kubernetes.LogRequestHeaders)(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{Status: "200 OK", StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			r, _ := http.NewRequest("GET", fmt.Sprintf("https://h/api/v1/namespaces/ns-%d", i), nil)
			r.Header.Set("Authorization", "Bearer t")
			if _, err := rt.RoundTrip(r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	re := regexp.MustCompile(`(?m)^api: GET https://h/api/v1/namespaces/ns-\d+ -> 200 OK in \S+ \([^)]*\)\napi:   > Authorization: Bearer \(redacted\)$`)
	if n := len(re.FindAllString(log.String(), -1)); n != 50 {
		t.Errorf("%d whole request entries, want 50:\n%s", n, log.String())
	}
}

func TestRedactHeader(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{"Authorization", "Bearer abc", "Bearer (redacted)"},
		{"authorization", "abc", "(redacted)"},
		{"Authorization", " abc", "(redacted)"},
		{"X-Remote-Secret", "abc", "(redacted)"},
		{"X-Password", "abc", "(redacted)"},
		{"Accept", "application/json", "application/json"},
	} {
		if got := kubernetes.RedactHeader(tt.name, tt.value); got != tt.want {
			t.Errorf("RedactHeader(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}
