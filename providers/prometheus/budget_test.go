package prometheus

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// answerOf is a matrix answer of one series with n samples of value v.
func answerOf(n int, v string) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf(`[%d,"%s"]`, 1764460800+60*i, v)
	}
	return `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"namespace":"risk"},"values":[` + strings.Join(vals, ",") + `]}]}}`
}

// TestRunBudget: what one client (one gpuform usage run) reads is bounded
// in total, not only per answer: answers each under MaxBytes stop at
// MaxTotalBytes, and samples stop at MaxSamples, each with an error that
// says what to change. Before, only each answer was bounded: five answers
// under 64 MiB each held 2.5 GB.
func TestRunBudget(t *testing.T) {
	big := answerOf(50_000, "1") // about 0.85 MB
	for _, c := range []struct {
		name   string
		body   string
		opts   Options
		okRuns int
		want   string
	}{
		{"bytes in total", big, Options{MaxBytes: 1 << 20, MaxTotalBytes: 2 << 20}, 2, "more than 2097152 bytes in total"},
		{"samples in total", answerOf(3, "1"), Options{MaxSamples: 7}, 2, "more than 7 samples in total"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, c.body) }))
			defer srv.Close()
			o := c.opts
			o.URL = srv.URL
			cl, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			var errs []error
			for range c.okRuns + 1 {
				_, err := cl.QueryRange(context.Background(), "up", time.Unix(0, 0), time.Unix(60, 0), time.Minute)
				errs = append(errs, err)
			}
			for i, err := range errs[:c.okRuns] {
				if err != nil {
					t.Errorf("query %d: %v", i+1, err)
				}
			}
			if err := errs[c.okRuns]; err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--step") {
				t.Errorf("query %d: %v, want %q and the advice", c.okRuns+1, err, c.want)
			}
		})
	}
}

// TestHostileSampleValues: the client reads NaN, ±Inf and negative values
// as they are (usage.Compute leaves them out and counts them), and refuses
// what is no sample.
func TestHostileSampleValues(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"NaN"],[2,"+Inf"],[3,"-Inf"],[4,"-1"],[5,"2"]]}]}}`)
	}))
	defer srv.Close()
	cl, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cl.QueryRange(context.Background(), "up", time.Unix(0, 0), time.Unix(60, 0), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || len(s[0].Points) != 5 || !math.IsNaN(s[0].Points[0].V) || !math.IsInf(s[0].Points[1].V, 1) || !math.IsInf(s[0].Points[2].V, -1) || s[0].Points[3].V != -1 || s[0].Points[4].V != 2 || s[0].Points[4].T.Unix() != 5 {
		t.Errorf("series %+v", s)
	}
	for _, bad := range []string{`[[1,2]]`, `[["1","2"]]`, `[[1]]`, `[[1,"2",3]]`, `[[1,"x"]]`, `[{}]`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":`+bad+`}]}}`)
		}))
		cl, err := New(Options{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.QueryRange(context.Background(), "up", time.Unix(0, 0), time.Unix(60, 0), time.Minute); err == nil {
			t.Errorf("values %s: accepted", bad)
		}
		srv.Close()
	}
}
