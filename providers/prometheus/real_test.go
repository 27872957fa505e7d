package prometheus

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/internal/promtest"
)

// testPassword's bcrypt hash (cost 4) is in webConfig.
const testPassword = "usage-test-password"

const webConfig = `tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
basic_auth_users:
  finance: $2a$04$eooWCjdsFfxLRQOkpFPhoOPylwTlkFm0T/8xpe5GdUMLw986MAJ7q
`

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// into dir as cert.pem and key.pem.
func selfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "prometheus test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"cert.pem": {Type: "CERTIFICATE", Bytes: der}, "key.pem": {Type: "EC PRIVATE KEY", Bytes: kb}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRealPrometheusTLSAndBasicAuth runs the client against a real
// Prometheus serving https with a self-signed certificate and basic auth:
// the CA file or --insecure-skip-tls-verify gets through TLS, the right
// password through auth, and a wrong one is refused without being shown.
func TestRealPrometheusTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	selfSigned(t, dir)
	srv := promtest.Start(t, dir, []byte("# TYPE gpu gauge\ngpu 1 1764460800\n# EOF\n"), promtest.Options{WebConfig: webConfig, TLS: true})
	ca := filepath.Join(dir, "cert.pem")
	ok := []string{EnvUsername + "=finance", EnvPassword + "=" + testPassword}
	wrong := []string{EnvUsername + "=finance", EnvPassword + "=wrong-password"}
	for _, c := range []struct {
		name string
		o    Options
		env  []string
		want string // "" for success, else part of the error
	}{
		{"CA file and password", Options{CAFile: ca}, ok, ""},
		{"skip verification and password", Options{InsecureSkipVerify: true}, ok, ""},
		{"no CA", Options{}, ok, "certificate signed by unknown authority"},
		{"wrong password", Options{CAFile: ca}, wrong, "HTTP 401 Unauthorized"},
		{"no credentials", Options{CAFile: ca}, nil, "HTTP 401 Unauthorized"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.URL = srv.URL
			cl, err := Connect(o, c.env, "")
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1764460800, 0)
			s, err := cl.QueryRange(context.Background(), "gpu", at, at.Add(time.Minute), time.Minute)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("query failed: %v", err)
			case c.want == "" && (len(s) != 1 || len(s[0].Points) != 2 || s[0].Points[0].V != 1):
				t.Errorf("got %+v, want gpu at 1 twice", s)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error containing %q", err, c.want)
			case err != nil && (strings.Contains(err.Error(), testPassword) || strings.Contains(err.Error(), "wrong-password")):
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestRealPrometheusSpecialValues: a real Prometheus writes NaN, +Inf and
// -Inf samples as it does; the client's decoder reads them as such (for
// usage.Compute to leave out and count) and reads a negative one.
func TestRealPrometheusSpecialValues(t *testing.T) {
	srv := promtest.Start(t, t.TempDir(), []byte("# TYPE gpu gauge\ngpu 1 1764460800\n# EOF\n"), promtest.Options{})
	cl, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1764460800, 0)
	for query, ok := range map[string]func(float64) bool{
		"gpu / 0":                   func(v float64) bool { return math.IsInf(v, 1) },
		"-gpu / 0":                  func(v float64) bool { return math.IsInf(v, -1) },
		"(gpu - gpu) / (gpu - gpu)": func(v float64) bool { return math.IsNaN(v) },
		"-gpu":                      func(v float64) bool { return v == -1 },
	} {
		s, err := cl.QueryRange(context.Background(), query, at, at.Add(time.Minute), time.Minute)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if len(s) != 1 || len(s[0].Points) != 2 || !ok(s[0].Points[0].V) || !s[0].Points[1].T.Equal(at.Add(time.Minute)) {
			t.Errorf("%s: got %+v", query, s)
		}
	}
}
