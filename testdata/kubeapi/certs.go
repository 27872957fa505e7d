package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName is the kubeconfig context (and cluster and user) name written
// into both kubeconfig files.
const contextName = "kubeapi"

// adminUser and adminGroup are the identity of both the client certificate
// and the static bearer token: system:masters is bound to cluster-admin by
// the apiserver's bootstrap RBAC policy.
const (
	adminUser  = "admin"
	adminGroup = "system:masters"
)

// pki holds the paths of the credentials kept under <dir>/pki. They are
// created on first start and reused afterwards, so a restarted server on the
// same --dir presents the same CA and accepts the same client credentials.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// CACert is the self-signed CA that signs the serving and client certificates;
// it is also the --client-ca-file and the controller manager's --root-ca-file.
func (p pki) CACert() string { return p.path("ca.crt") }

// CAKey is the CA's private key.
func (p pki) CAKey() string { return p.path("ca.key") }

// ServingCert is the apiserver's serving certificate (127.0.0.1, ::1,
// localhost, the kubernetes service names and the service IP 10.0.0.1).
func (p pki) ServingCert() string { return p.path("apiserver.crt") }

// ServingKey is the serving certificate's private key.
func (p pki) ServingKey() string { return p.path("apiserver.key") }

// AdminCert is the client certificate for CN=admin, O=system:masters.
func (p pki) AdminCert() string { return p.path("admin.crt") }

// AdminKey is the admin client certificate's private key.
func (p pki) AdminKey() string { return p.path("admin.key") }

// SAKey is the RSA key that signs service account tokens; the apiserver uses
// it as both --service-account-key-file and
// --service-account-signing-key-file, and the controller manager as
// --service-account-private-key-file.
func (p pki) SAKey() string { return p.path("sa.key") }

// TokenFile is the apiserver's --token-auth-file (CSV).
func (p pki) TokenFile() string { return p.path("tokens.csv") }

// Token is the admin bearer token, in plain text.
func (p pki) Token() string { return p.path("token") }

// ensure creates whatever credentials are missing and leaves existing ones
// untouched.
func (p pki) ensure() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caKey, caCert, err := p.ensureCA()
	if err != nil {
		return err
	}
	if !exists(p.ServingCert()) || !exists(p.ServingKey()) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "kube-apiserver"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames: []string{
				"localhost", "kubernetes", "kubernetes.default",
				"kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
			},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
		}
		if err := p.issue(tmpl, caCert, caKey, p.ServingCert(), p.ServingKey()); err != nil {
			return err
		}
	}
	if !exists(p.AdminCert()) || !exists(p.AdminKey()) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: adminUser, Organization: []string{adminGroup}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := p.issue(tmpl, caCert, caKey, p.AdminCert(), p.AdminKey()); err != nil {
			return err
		}
	}
	if !exists(p.SAKey()) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		if err := writePEM(p.SAKey(), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key), 0o600); err != nil {
			return err
		}
	}
	if !exists(p.Token()) || !exists(p.TokenFile()) {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		token := hex.EncodeToString(b)
		if err := os.WriteFile(p.Token(), []byte(token+"\n"), 0o600); err != nil {
			return err
		}
		// token,user,uid,"group1,group2"
		line := fmt.Sprintf("%s,%s,%s,\"%s\"\n", token, adminUser, adminUser, adminGroup)
		if err := os.WriteFile(p.TokenFile(), []byte(line), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ensureCA loads the CA from disk, creating it first if absent.
func (p pki) ensureCA() (*rsa.PrivateKey, *x509.Certificate, error) {
	if !exists(p.CACert()) || !exists(p.CAKey()) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, nil, err
		}
		now := time.Now()
		tmpl := &x509.Certificate{
			SerialNumber:          serial(),
			Subject:               pkix.Name{CommonName: "kubeapi-test-ca"},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.AddDate(10, 0, 0),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
			SubjectKeyId:          keyID(&key.PublicKey),
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			return nil, nil, err
		}
		if err := writePEM(p.CAKey(), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key), 0o600); err != nil {
			return nil, nil, err
		}
		if err := writePEM(p.CACert(), "CERTIFICATE", der, 0o644); err != nil {
			return nil, nil, err
		}
	}
	certDER, err := readPEM(p.CACert(), "CERTIFICATE")
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := readPEM(p.CAKey(), "RSA PRIVATE KEY")
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParsePKCS1PrivateKey(keyDER)
	if err != nil {
		return nil, nil, err
	}
	return key, cert, nil
}

// issue signs tmpl with the CA and writes certificate and key.
func (p pki) issue(tmpl, ca *x509.Certificate, caKey *rsa.PrivateKey, certPath, keyPath string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.AddDate(10, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(keyPath, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key), 0o600); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der, 0o644)
}

// writeKubeconfigs writes <dir>/kubeconfig (admin client certificate) and
// <dir>/kubeconfig-token (admin bearer token) pointing at server. Both embed
// the CA and credentials, so they stay valid if the files under pki/ move.
func (p pki) writeKubeconfigs(dir, server string) error {
	ca, err := os.ReadFile(p.CACert())
	if err != nil {
		return err
	}
	crt, err := os.ReadFile(p.AdminCert())
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.AdminKey())
	if err != nil {
		return err
	}
	tok, err := os.ReadFile(p.Token())
	if err != nil {
		return err
	}
	for _, kc := range []struct {
		file string
		auth *clientcmdapi.AuthInfo
	}{
		{"kubeconfig", &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}},
		{"kubeconfig-token", &clientcmdapi.AuthInfo{Token: string(trimNL(tok))}},
	} {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
		cfg.AuthInfos[contextName] = kc.auth
		cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
		cfg.CurrentContext = contextName
		if err := writeKubeconfig(cfg, filepath.Join(dir, kc.file)); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes cfg atomically, so a reader never sees half a file.
func writeKubeconfig(cfg *clientcmdapi.Config, path string) error {
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b, 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func keyID(pub *rsa.PublicKey) []byte {
	sum := sha256.Sum256(x509.MarshalPKCS1PublicKey(pub))
	return sum[:20]
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func readPEM(path, typ string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != typ {
		return nil, fmt.Errorf("%s: no %s PEM block", path, typ)
	}
	return blk.Bytes, nil
}

// writeFileAtomic writes data to a temporary file next to path and renames it
// into place.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
