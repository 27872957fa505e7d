// Package prometheus reads range queries from a Prometheus HTTP API
// (/api/v1/query_range) for gpuform usage, with the authentication users put
// in front of Prometheus: a bearer token, basic auth, a private CA. Responses
// are bounded in size and time, and no credential ever appears in an error.
package prometheus

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuform/gpuform/engine/usage"
)

// Defaults of Options.
const (
	DefaultTimeout  = 2 * time.Minute
	DefaultMaxBytes = 64 << 20
	// DefaultMaxTotalBytes bounds the answers of all the queries of one
	// Client (one gpuform usage run) together, DefaultMaxSamples their
	// samples (each held as a usage.Point of 32 bytes until the report is
	// made).
	DefaultMaxTotalBytes = 128 << 20
	DefaultMaxSamples    = 8 << 20
	// maxSecretBytes bounds a token or CA file.
	maxSecretBytes = 1 << 20
)

// Options say how to reach Prometheus.
type Options struct {
	// URL is the server's base URL, e.g. https://prometheus.example:9090
	// or one with a path prefix; no credentials in it.
	URL string
	// BearerToken is sent as "Authorization: Bearer ..." when set.
	BearerToken string
	// Username and Password are sent as basic auth when Username is set.
	Username, Password string
	// CAFile is a PEM bundle of the CAs trusted for https, in addition to
	// the system's.
	CAFile string
	// InsecureSkipVerify accepts any server certificate.
	InsecureSkipVerify bool
	// Timeout bounds each query (DefaultTimeout when 0); MaxBytes each
	// response (DefaultMaxBytes when 0); MaxTotalBytes and MaxSamples all
	// the responses of the Client together (DefaultMaxTotalBytes,
	// DefaultMaxSamples when 0).
	Timeout       time.Duration
	MaxBytes      int64
	MaxTotalBytes int64
	MaxSamples    int
}

// Client runs range queries against one Prometheus.
type Client struct {
	base     *url.URL
	http     *http.Client
	opts     Options
	maxBytes int64

	// mu guards what the Client's answers have spent of its budget.
	mu         sync.Mutex
	spentBytes int64
	samples    int
}

// Connect is New with o's credentials from env and tokenFile (see
// Options.Credentials).
func Connect(o Options, env []string, tokenFile string) (*Client, error) {
	if err := o.Credentials(env, tokenFile); err != nil {
		return nil, err
	}
	return New(o)
}

// New checks o and returns its Client.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--prometheus wants the server's http:// or https:// URL, e.g. http://prometheus.monitoring:9090")
	}
	if u.User != nil {
		return nil, errors.New("--prometheus: the URL holds credentials; pass them in $GPUFORM_PROMETHEUS_USERNAME and $GPUFORM_PROMETHEUS_PASSWORD instead, so they stay out of shell history and process lists")
	}
	if o.BearerToken != "" && o.Username != "" {
		return nil, errors.New("Prometheus authentication: give a bearer token or basic auth, not both")
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // the user's explicit choice
	if o.CAFile != "" {
		pem, err := ReadSecretFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the Prometheus CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the Prometheus CA file %s holds no PEM certificate", o.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	tr.Proxy = http.ProxyFromEnvironment
	c := &Client{base: u, opts: o, maxBytes: o.MaxBytes}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.opts.MaxTotalBytes <= 0 {
		c.opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if c.opts.MaxSamples <= 0 {
		c.opts.MaxSamples = DefaultMaxSamples
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c.http = &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return errors.New("Prometheus answered with a redirect, which gpuform does not follow with credentials: pass the final URL to --prometheus")
	}}
	return c, nil
}

// ReadSecretFile reads a token or CA file: a regular file of at most 1 MiB,
// its surrounding white space trimmed.
func ReadSecretFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecretBytes)
	}
	return []byte(strings.TrimSpace(string(b))), nil
}

// apiResponse is the envelope of every Prometheus HTTP API answer.
type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string      `json:"resultType"`
		Result     []apiSeries `json:"result"`
	} `json:"data"`
}

// apiSeries is one series of a matrix answer.
type apiSeries struct {
	Metric map[string]string `json:"metric"`
	Values []sample          `json:"values"`
}

// sample is one [unix seconds, "value"] pair, decoded without the boxed
// values of a [2]any (an answer's samples are most of what it holds).
type sample struct{ t, v float64 }

var errNotSample = errors.New("a sample is not [time, \"value\"]")

// UnmarshalJSON decodes [t, "v"]; v may be NaN, +Inf or -Inf (Prometheus
// writes them so), which usage.Compute leaves out.
func (s *sample) UnmarshalJSON(b []byte) error {
	body, ok1 := bytes.CutPrefix(bytes.TrimSpace(b), []byte("["))
	body, ok2 := bytes.CutSuffix(body, []byte("]"))
	ts, val, ok3 := bytes.Cut(body, []byte(","))
	val = bytes.TrimSpace(val)
	if !ok1 || !ok2 || !ok3 || len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' || bytes.ContainsAny(val[1:len(val)-1], `"\`) {
		return errNotSample
	}
	t, err := strconv.ParseFloat(string(bytes.TrimSpace(ts)), 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return errNotSample
	}
	v, err := strconv.ParseFloat(string(val[1:len(val)-1]), 64)
	if err != nil {
		return fmt.Errorf("a sample's value %q: %w", clip(string(val[1:len(val)-1]), 40), err)
	}
	s.t, s.v = t, v
	return nil
}

// QueryRange runs query at every step from start to end (inclusive).
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]usage.Series, error) {
	form := url.Values{
		"query": {query},
		"start": {formatTime(start)},
		"end":   {formatTime(end)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	u := c.base.JoinPath("api/v1/query_range")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("building the range query request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.opts.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.BearerToken)
	} else if c.opts.Username != "" {
		req.SetBasicAuth(c.opts.Username, c.opts.Password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, errors.New(c.redact(err.Error()))
	}
	defer resp.Body.Close()
	body, err := c.readBody(resp.Body)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil || r.Status == "" {
		return nil, fmt.Errorf("HTTP %s: not a Prometheus API answer", resp.Status)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("HTTP %s: %s: %s", resp.Status, r.ErrorType, c.redact(clip(r.Error, 512)))
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("the answer is a %q, not a range query's matrix", r.Data.ResultType)
	}
	if err := c.spendSamples(r.Data.Result); err != nil {
		return nil, err
	}
	out := make([]usage.Series, 0, len(r.Data.Result))
	for _, s := range r.Data.Result {
		ser := usage.Series{Labels: s.Metric, Points: make([]usage.Point, 0, len(s.Values))}
		for _, v := range s.Values {
			ser.Points = append(ser.Points, usage.Point{T: time.UnixMilli(int64(math.Round(v.t * 1000))).UTC(), V: v.v})
		}
		out = append(out, ser)
	}
	return out, nil
}

// readBody reads an answer within the per-answer limit and what is left
// of the Client's total.
func (c *Client) readBody(r io.Reader) ([]byte, error) {
	c.mu.Lock()
	left := c.opts.MaxTotalBytes - c.spentBytes
	c.mu.Unlock()
	body, err := io.ReadAll(io.LimitReader(r, min(c.maxBytes, left)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	c.mu.Lock()
	c.spentBytes += int64(len(body))
	c.mu.Unlock()
	switch {
	case int64(len(body)) > c.maxBytes:
		return nil, fmt.Errorf("the answer is larger than %d bytes: use a longer --step or a shorter window", c.maxBytes)
	case int64(len(body)) > left:
		return nil, fmt.Errorf("the answers are more than %d bytes in total: use a longer --step or a shorter window", c.opts.MaxTotalBytes)
	}
	return body, nil
}

// spendSamples counts an answer's samples against the Client's total.
func (c *Client) spendSamples(result []apiSeries) error {
	n := 0
	for _, s := range result {
		n += len(s.Values)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples += n
	if c.samples > c.opts.MaxSamples {
		return fmt.Errorf("the answers hold more than %d samples in total: use a longer --step or a shorter window", c.opts.MaxSamples)
	}
	return nil
}

// redact replaces the credentials in s, a message that may quote what the
// server or a proxy echoed.
func (c *Client) redact(s string) string {
	for _, secret := range []string{c.opts.BearerToken, c.opts.Password} {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Environment variables of Prometheus credentials, read by Credentials.
const (
	EnvToken    = "GPUFORM_PROMETHEUS_TOKEN"
	EnvUsername = "GPUFORM_PROMETHEUS_USERNAME"
	EnvPassword = "GPUFORM_PROMETHEUS_PASSWORD"
)

// Credentials fills o's bearer token from tokenFile (when set) or
// $GPUFORM_PROMETHEUS_TOKEN, and its basic auth from
// $GPUFORM_PROMETHEUS_USERNAME and $GPUFORM_PROMETHEUS_PASSWORD; env is the
// process environment (KEY=value, the last one wins).
func (o *Options) Credentials(env []string, tokenFile string) error {
	get := func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], key+"="); ok {
				return v
			}
		}
		return ""
	}
	o.BearerToken = get(EnvToken)
	if tokenFile != "" {
		b, err := ReadSecretFile(tokenFile)
		if err != nil {
			return fmt.Errorf("reading the Prometheus token file: %w", err)
		}
		if len(b) == 0 {
			return fmt.Errorf("the Prometheus token file %s is empty", tokenFile)
		}
		o.BearerToken = string(b)
	}
	o.Username, o.Password = get(EnvUsername), get(EnvPassword)
	if o.Password != "" && o.Username == "" {
		return fmt.Errorf("$%s is set but $%s is not", EnvPassword, EnvUsername)
	}
	return nil
}
