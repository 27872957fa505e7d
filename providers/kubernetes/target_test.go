package kubernetes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuform/gpuform/providers/kubernetes"
)

// Resolve picks the cluster in kubectl's order with the cluster block
// between the flags and the environment: flags > cluster block > saved
// plan (context) > $KUBECONFIG > ~/.kube/config; a simulated cluster
// before all of them, unless --kubeconfig or --context name a real one.
func TestResolveOrder(t *testing.T) {
	home := clientcmd.RecommendedHomeFile
	flags := kubernetes.Selection{Kubeconfig: "flag.yaml", Context: "flag-ctx"}
	block := kubernetes.Selection{Kubeconfig: "block.yaml", Context: "block-ctx"}
	env := []string{"HOME=/h", "KUBECONFIG=/a.yaml" + string(os.PathListSeparator) + "/b.yaml" + string(os.PathListSeparator) + "/a.yaml"}
	for _, tt := range []struct {
		name string
		opts kubernetes.ConnectionOptions
		want kubernetes.Target
	}{
		{"default", kubernetes.ConnectionOptions{},
			kubernetes.Target{Files: []string{home}, KubeconfigFrom: "~/.kube/config", ContextFrom: "current context"}},
		{"env", kubernetes.ConnectionOptions{Env: env},
			kubernetes.Target{Files: []string{"/a.yaml", "/b.yaml"}, KubeconfigFrom: "$KUBECONFIG", ContextFrom: "current context"}},
		{"block over env, relative to the configuration", kubernetes.ConnectionOptions{Block: block, Dir: "conf", Env: env},
			kubernetes.Target{Kubeconfig: filepath.Join("conf", "block.yaml"), Context: "block-ctx", KubeconfigFrom: "cluster block", ContextFrom: "cluster block"}},
		{"block's home path kept for expansion", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "~/.kube/prod"}, Dir: "conf"},
			kubernetes.Target{Kubeconfig: "~/.kube/prod", KubeconfigFrom: "cluster block", ContextFrom: "current context"}},
		{"block's absolute path kept", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "/etc/kc"}, Dir: "conf"},
			kubernetes.Target{Kubeconfig: "/etc/kc", KubeconfigFrom: "cluster block", ContextFrom: "current context"}},
		{"flags over block, kubeconfig as given", kubernetes.ConnectionOptions{Flags: flags, Block: block, Dir: "conf", Env: env},
			kubernetes.Target{Kubeconfig: "flag.yaml", Context: "flag-ctx", KubeconfigFrom: "--kubeconfig", ContextFrom: "--context"}},
		{"context flag with the block's kubeconfig", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Context: "flag-ctx"}, Block: block},
			kubernetes.Target{Kubeconfig: "block.yaml", Context: "flag-ctx", KubeconfigFrom: "cluster block", ContextFrom: "--context"}},
		{"saved plan's context over env", kubernetes.ConnectionOptions{SavedContext: "prod", Env: env},
			kubernetes.Target{Files: []string{"/a.yaml", "/b.yaml"}, Context: "prod", KubeconfigFrom: "$KUBECONFIG", ContextFrom: "saved plan"}},
		{"context flag over saved plan", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "k"}, SavedContext: "prod"},
			kubernetes.Target{Kubeconfig: "k", Context: "prod", KubeconfigFrom: "--kubeconfig", ContextFrom: "saved plan"}},
		{"simulated flag over everything", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "k", Simulated: "c.sim.hcl"}, Block: block, Dir: "conf"},
			kubernetes.Target{Simulated: filepath.Join("conf", "c.sim.hcl"), KubeconfigFrom: "--simulated"}},
		{"block's simulated cluster", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Simulated: "c.sim.hcl"}, Dir: "conf", InCluster: true},
			kubernetes.Target{Simulated: filepath.Join("conf", "c.sim.hcl"), KubeconfigFrom: "cluster block"}},
		{"kubeconfig flag over the block's simulated cluster", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "k"}, Block: kubernetes.Selection{Simulated: "c.sim.hcl"}},
			kubernetes.Target{Kubeconfig: "k", KubeconfigFrom: "--kubeconfig", ContextFrom: "current context"}},
		{"saved plan on a simulated cluster", kubernetes.ConnectionOptions{SavedContext: "simulated:/abs/c.sim.hcl"},
			kubernetes.Target{Simulated: "/abs/c.sim.hcl", KubeconfigFrom: "saved plan"}},
		{"context flag over a saved simulated plan", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Context: "c"}, SavedContext: "simulated:/abs/c.sim.hcl"},
			kubernetes.Target{Files: []string{home}, Context: "c", KubeconfigFrom: "~/.kube/config", ContextFrom: "--context"}},
		{"in-cluster first, the block after", kubernetes.ConnectionOptions{InCluster: true, Block: block},
			kubernetes.Target{InCluster: true, Kubeconfig: "block.yaml", Context: "block-ctx", KubeconfigFrom: "cluster block", ContextFrom: "cluster block"}},
		{"no in-cluster with a flag", kubernetes.ConnectionOptions{InCluster: true, Flags: kubernetes.Selection{Context: "c"}},
			kubernetes.Target{Files: []string{home}, Context: "c", KubeconfigFrom: "~/.kube/config", ContextFrom: "--context"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := kubernetes.Resolve(tt.opts)
			if !equalTarget(got, tt.want) {
				t.Errorf("Resolve(%+v)\n = %+v\nwant %+v", tt.opts, got, tt.want)
			}
		})
	}
}

func equalTarget(a, b kubernetes.Target) bool {
	return a.Simulated == b.Simulated && a.InCluster == b.InCluster && a.Kubeconfig == b.Kubeconfig &&
		strings.Join(a.Files, "|") == strings.Join(b.Files, "|") && (a.Files == nil) == (b.Files == nil) &&
		a.Context == b.Context && a.KubeconfigFrom == b.KubeconfigFrom && a.ContextFrom == b.ContextFrom
}

// RESTConfig loads the context Resolve picked from the files it picked,
// falls back from in-cluster to the kubeconfig outside a pod, and names
// the contexts there are when the one asked for is missing.
func TestRESTConfigLoadsTheResolvedContext(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kc.yaml")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443"}
- name: b
  cluster: {server: "https://b.example:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u}
current-context: ctx-a
`
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
	for _, tt := range []struct {
		name       string
		opts       kubernetes.ConnectionOptions
		host, ctx  string
		errContain string
	}{
		{"current context from $KUBECONFIG", kubernetes.ConnectionOptions{Env: []string{"KUBECONFIG=" + kc}}, "https://a.example:6443", "ctx-a", ""},
		{"block's context", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "kc.yaml", Context: "ctx-b"}, Dir: dir}, "https://b.example:6443", "ctx-b", ""},
		{"saved plan's context", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: kc}, SavedContext: "ctx-b"}, "https://b.example:6443", "ctx-b", ""},
		{"outside a pod, in-cluster falls back", kubernetes.ConnectionOptions{InCluster: true, Env: []string{"KUBECONFIG=" + kc}}, "https://a.example:6443", "ctx-a", ""},
		{"missing context", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: kc, Context: "nope"}}, "", "", `context "nope" is not in the kubeconfig ` + kc + `. Available contexts: ctx-a, ctx-b.`},
		{"missing file", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: filepath.Join(dir, "none")}}, "", "", "Pass --kubeconfig FILE or set KUBECONFIG"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, name, err := kubernetes.Resolve(tt.opts).RESTConfig()
			if tt.errContain != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errContain) {
					t.Fatalf("error %v, want one containing %q", err, tt.errContain)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.host || name != tt.ctx {
				t.Errorf("host %s context %s, want %s %s", cfg.Host, name, tt.host, tt.ctx)
			}
		})
	}
}
