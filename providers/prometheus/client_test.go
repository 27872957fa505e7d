package prometheus

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testToken = "s3cr3t-t0ken-value"

const matrix = `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"namespace":"risk"},"values":[[1764460800,"2"],[1764460860.5,"1.5"]]}]}}`

func query(t *testing.T, o Options) error {
	t.Helper()
	c, err := New(o)
	if err != nil {
		return err
	}
	_, err = c.QueryRange(context.Background(), "up", time.Unix(0, 0), time.Unix(60, 0), time.Minute)
	return err
}

// TestQueryRange checks the request gpuform sends and the samples it reads.
func TestQueryRange(t *testing.T) {
	var got *http.Request
	var form string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b, _ := io.ReadAll(r.Body)
		form = string(b)
		io.WriteString(w, matrix)
	}))
	defer srv.Close()
	c, err := New(Options{URL: srv.URL + "/prom/", BearerToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.QueryRange(context.Background(), `sum(x{a="b"})`, time.Unix(1764460800, 0), time.Unix(1764460860, 0), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL.Path != "/prom/api/v1/query_range" || got.Method != http.MethodPost || got.Header.Get("Authorization") != "Bearer "+testToken {
		t.Errorf("request %s %s, Authorization %q", got.Method, got.URL.Path, got.Header.Get("Authorization"))
	}
	if want := "end=1764460860&query=sum%28x%7Ba%3D%22b%22%7D%29&start=1764460800&step=60"; form != want {
		t.Errorf("form %s, want %s", form, want)
	}
	if len(s) != 1 || s[0].Labels["namespace"] != "risk" || len(s[0].Points) != 2 || s[0].Points[1].V != 1.5 || s[0].Points[1].T.UnixMilli() != 1764460860500 {
		t.Errorf("series %+v", s)
	}
}

// TestFailuresNeverShowCredentials: every failure is an error that says
// what went wrong, and none quotes the token or the password, even when the
// server echoes them.
func TestFailuresNeverShowCredentials(t *testing.T) {
	handler := func(status int, body string, delay time.Duration) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			if body == "redirect" {
				http.Redirect(w, r, "http://elsewhere.example/", http.StatusFound)
				return
			}
			w.WriteHeader(status)
			io.WriteString(w, strings.ReplaceAll(body, "TOKEN", r.Header.Get("Authorization")))
		}))
	}
	big := `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Repeat(`{"metric":{},"values":[]},`, 100) + `{}]}}`
	for _, c := range []struct {
		name, body string
		status     int
		delay      time.Duration
		opts       Options
		want       string
	}{
		{"API error echoing the token", `{"status":"error","errorType":"bad_data","error":"TOKEN is not allowed"}`, 400, 0, Options{}, "HTTP 400 Bad Request: bad_data: Bearer [redacted] is not allowed"},
		{"proxy login page", `<html>login</html>`, 401, 0, Options{}, "HTTP 401 Unauthorized: not a Prometheus API answer"},
		{"not a matrix", `{"status":"success","data":{"resultType":"vector","result":[]}}`, 200, 0, Options{}, `the answer is a "vector", not a range query's matrix`},
		{"too large", big, 200, 0, Options{MaxBytes: 1000}, "the answer is larger than 1000 bytes: use a longer --step or a shorter window"},
		{"too slow", matrix, 200, time.Second, Options{Timeout: 100 * time.Millisecond}, "Client.Timeout exceeded"},
		{"redirect", "redirect", 0, 0, Options{}, "Prometheus answered with a redirect, which gpuform does not follow with credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := handler(c.status, c.body, c.delay)
			defer srv.Close()
			o := c.opts
			o.URL, o.BearerToken = srv.URL, testToken
			err := query(t, o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		url       string
		env       []string
		tokenFile string
		want      string // the error, or "token:"/"basic:" and what is sent
	}{
		{"token file wins over env", "http://p:9090", []string{EnvToken + "=from-env"}, tokenFile, "token:" + testToken},
		{"token from env", "http://p:9090", []string{EnvToken + "=from-env"}, "", "token:from-env"},
		{"basic auth from env", "http://p:9090", []string{EnvUsername + "=finance", EnvPassword + "=pw"}, "", "basic:finance"},
		{"password without user", "http://p:9090", []string{EnvPassword + "=pw"}, "", "$GPUFORM_PROMETHEUS_PASSWORD is set but $GPUFORM_PROMETHEUS_USERNAME is not"},
		{"both", "http://p:9090", []string{EnvToken + "=t", EnvUsername + "=u"}, "", "Prometheus authentication: give a bearer token or basic auth, not both"},
		{"empty token file", "http://p:9090", nil, empty, "the Prometheus token file " + empty + " is empty"},
		{"token file is a directory", "http://p:9090", nil, dir, "reading the Prometheus token file: " + dir + " is not a regular file"},
		{"credentials in the URL", "https://u:" + testToken + "@p:9090", nil, "", "--prometheus: the URL holds credentials"},
		{"not a URL", "prometheus:9090", nil, "", "--prometheus wants the server's http:// or https:// URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := Connect(Options{URL: c.url}, c.env, c.tokenFile)
			got := ""
			switch {
			case err != nil:
				got = err.Error()
				if strings.Contains(got, testToken) {
					t.Errorf("the error shows the token: %s", got)
				}
			case cl.opts.BearerToken != "":
				got = "token:" + cl.opts.BearerToken
			default:
				got = "basic:" + cl.opts.Username
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
