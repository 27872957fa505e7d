package kubernetes_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuform/gpuform/internal/files"
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
		{"allowed block over env, inside the configuration", kubernetes.ConnectionOptions{Block: block, Dir: "conf", Env: env, AllowBlockKubeconfig: true},
			kubernetes.Target{Kubeconfig: "block.yaml", KubeconfigDir: "conf", Context: "block-ctx", KubeconfigFrom: "cluster block", ContextFrom: "cluster block"}},
		{"flags over block, kubeconfig as given", kubernetes.ConnectionOptions{Flags: flags, Block: block, Dir: "conf", Env: env},
			kubernetes.Target{Kubeconfig: "flag.yaml", Context: "flag-ctx", KubeconfigFrom: "--kubeconfig", ContextFrom: "--context"}},
		{"kubeconfig flag over block, untrusted: the block's context applies", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "flag.yaml"}, Block: block, Untrusted: true},
			kubernetes.Target{Kubeconfig: "flag.yaml", Context: "block-ctx", KubeconfigFrom: "--kubeconfig", ContextFrom: "cluster block"}},
		{"context flag with the allowed block's kubeconfig", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Context: "flag-ctx"}, Block: block, AllowBlockKubeconfig: true},
			kubernetes.Target{Kubeconfig: "block.yaml", KubeconfigDir: ".", Context: "flag-ctx", KubeconfigFrom: "cluster block", ContextFrom: "--context"}},
		{"saved plan's context over env", kubernetes.ConnectionOptions{SavedContext: "prod", Env: env},
			kubernetes.Target{Files: []string{"/a.yaml", "/b.yaml"}, Context: "prod", KubeconfigFrom: "$KUBECONFIG", ContextFrom: "saved plan"}},
		{"context flag over saved plan", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "k"}, SavedContext: "prod"},
			kubernetes.Target{Kubeconfig: "k", Context: "prod", KubeconfigFrom: "--kubeconfig", ContextFrom: "saved plan"}},
		{"simulated flag over everything", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "k", Simulated: "c.sim.hcl"}, Block: block, Dir: "conf"},
			kubernetes.Target{Simulated: "c.sim.hcl", SimulatedDir: "conf", KubeconfigFrom: "--simulated"}},
		{"block's simulated cluster", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Simulated: "c.sim.hcl"}, Dir: "conf", InCluster: true},
			kubernetes.Target{Simulated: "c.sim.hcl", SimulatedDir: "conf", KubeconfigFrom: "cluster block"}},
		{"block's simulated cluster in a subdirectory, untrusted", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Simulated: "./sim/c.sim.hcl"}, Untrusted: true},
			kubernetes.Target{Simulated: filepath.Join("sim", "c.sim.hcl"), SimulatedDir: ".", KubeconfigFrom: "cluster block"}},
		{"kubeconfig flag over the block's simulated cluster", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: "k"}, Block: kubernetes.Selection{Simulated: "c.sim.hcl"}},
			kubernetes.Target{Kubeconfig: "k", KubeconfigFrom: "--kubeconfig", ContextFrom: "current context"}},
		{"saved plan on a simulated cluster", kubernetes.ConnectionOptions{SavedContext: "simulated:/abs/c.sim.hcl"},
			kubernetes.Target{Simulated: "c.sim.hcl", SimulatedDir: "/abs", KubeconfigFrom: "saved plan"}},
		{"context flag over a saved simulated plan", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Context: "c"}, SavedContext: "simulated:/abs/c.sim.hcl"},
			kubernetes.Target{Files: []string{home}, Context: "c", KubeconfigFrom: "~/.kube/config", ContextFrom: "--context"}},
		{"in-cluster first, the allowed block after", kubernetes.ConnectionOptions{InCluster: true, Block: block, AllowBlockKubeconfig: true},
			kubernetes.Target{InCluster: true, Kubeconfig: "block.yaml", KubeconfigDir: ".", Context: "block-ctx", KubeconfigFrom: "cluster block", ContextFrom: "cluster block"}},
		{"no in-cluster with a flag", kubernetes.ConnectionOptions{InCluster: true, Flags: kubernetes.Selection{Context: "c"}},
			kubernetes.Target{Files: []string{home}, Context: "c", KubeconfigFrom: "~/.kube/config", ContextFrom: "--context"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubernetes.Resolve(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !equalTarget(got, tt.want) {
				t.Errorf("Resolve(%+v)\n = %+v\nwant %+v", tt.opts, got, tt.want)
			}
		})
	}
}

func equalTarget(a, b kubernetes.Target) bool {
	return a.Simulated == b.Simulated && a.SimulatedDir == b.SimulatedDir && a.KubeconfigDir == b.KubeconfigDir && a.InCluster == b.InCluster && a.Kubeconfig == b.Kubeconfig &&
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
		{"allowed block's file and context", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "kc.yaml", Context: "ctx-b"}, Dir: dir, AllowBlockKubeconfig: true}, "https://b.example:6443", "ctx-b", ""},
		{"saved plan's context", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: kc}, SavedContext: "ctx-b"}, "https://b.example:6443", "ctx-b", ""},
		{"outside a pod, in-cluster falls back", kubernetes.ConnectionOptions{InCluster: true, Env: []string{"KUBECONFIG=" + kc}}, "https://a.example:6443", "ctx-a", ""},
		{"missing context", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: kc, Context: "nope"}}, "", "", `context "nope" is not in the kubeconfig ` + kc + `. Available contexts: ctx-a, ctx-b.`},
		{"missing file", kubernetes.ConnectionOptions{Flags: kubernetes.Selection{Kubeconfig: filepath.Join(dir, "none")}}, "", "", "Pass --kubeconfig FILE or set KUBECONFIG"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target, err := kubernetes.Resolve(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			cfg, name, err := target.RESTConfig()
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

// The rule for a kubeconfig the cluster block names (issue 15): refused
// without --allow-config-kubeconfig, refused for a pull request or a git
// ref whatever the flag says, refused outside the configuration directory;
// a simulated file outside it is refused too. Each error starts with the
// block's file:line:col and says what to do. Before, Resolve took each
// of these paths as given.
func TestResolveRefusesWhatTheConfigurationMayNotChoose(t *testing.T) {
	at := map[string]hcl.Range{
		"kubeconfig": {Filename: "main.hcl", Start: hcl.Pos{Line: 3, Column: 16}, End: hcl.Pos{Line: 3, Column: 30}},
		"simulated":  {Filename: "main.hcl", Start: hcl.Pos{Line: 4, Column: 16}, End: hcl.Pos{Line: 4, Column: 33}},
	}
	block := kubernetes.Selection{Kubeconfig: "kc.yaml", Context: "ci", Ranges: at}
	for _, tt := range []struct {
		name string
		opts kubernetes.ConnectionOptions
		want []string
	}{
		{"not allowed", kubernetes.ConnectionOptions{Block: block, Dir: "conf", Env: []string{"KUBECONFIG=/k"}},
			[]string{"main.hcl:3,16-30: ", `names the kubeconfig file "kc.yaml"`, "only with --allow-config-kubeconfig", "can run programs", "Pass --kubeconfig FILE"}},
		{"untrusted, allowed", kubernetes.ConnectionOptions{Block: block, Untrusted: true, AllowBlockKubeconfig: true},
			[]string{"main.hcl:3,16-30: ", "plan --base, --repo, --ref", "even with --allow-config-kubeconfig", "Pass --kubeconfig FILE"}},
		{"untrusted with --context", kubernetes.ConnectionOptions{Block: block, Untrusted: true, Flags: kubernetes.Selection{Context: "x"}},
			[]string{"may not choose the kubeconfig"}},
		{"allowed, absolute", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "/etc/kubernetes/admin.conf", Ranges: at}, AllowBlockKubeconfig: true},
			[]string{"main.hcl:3,16-30: ", `kubeconfig "/etc/kubernetes/admin.conf" is outside the configuration directory`, "Pass --kubeconfig FILE or set KUBECONFIG"}},
		{"allowed, home", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "~/.kube/config"}, AllowBlockKubeconfig: true},
			[]string{`"~/.kube/config" is outside the configuration directory`}},
		{"allowed, climbing out", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: "../ci/kc.yaml"}, AllowBlockKubeconfig: true},
			[]string{"is outside the configuration directory"}},
		{"simulated outside", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Simulated: "../other/c.sim.hcl", Ranges: at}, Dir: "conf"},
			[]string{"main.hcl:4,16-33: ", `simulated file "../other/c.sim.hcl" is outside the configuration directory`, "--simulated FILE"}},
		{"simulated absolute", kubernetes.ConnectionOptions{Block: kubernetes.Selection{Simulated: "/tmp/c.sim.hcl"}},
			[]string{"is outside the configuration directory"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubernetes.Resolve(tt.opts)
			if err == nil {
				t.Fatalf("Resolve accepted it: %+v", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// When the pod's service account comes first (drift's CronJob), a
// refused kubeconfig of the cluster block is no error in a pod, where it
// is never read, so one configuration serves workstations and the CronJob;
// outside a pod, loading the target returns the refusal and reads nothing.
func TestRefusedBlockKubeconfigOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kc.yaml") // reading it would block
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	target, err := kubernetes.Resolve(kubernetes.ConnectionOptions{InCluster: true, Untrusted: true, Dir: dir, Block: kubernetes.Selection{Kubeconfig: "kc.yaml"}})
	if err != nil {
		t.Fatalf("Resolve refused a kubeconfig the pod's service account would stand in for: %v", err)
	}
	if !target.InCluster {
		t.Fatal("the pod's service account is not tried")
	}
	if _, _, err := target.RESTConfig(); err == nil || !strings.Contains(err.Error(), "may not choose the kubeconfig") {
		t.Fatalf("outside a pod: %v, want the refusal", err)
	}
}

// A kubeconfig the cluster block names is read by gpuform, confined to the
// configuration directory: a FIFO fails at once (before, client-go's read
// blocked), a link to a file outside or to /dev/zero is refused; relative
// file references inside it are taken from its directory as client-go does.
func TestBlockKubeconfigIsConfined(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "conf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const kc = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443", certificate-authority: ca.crt}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
current-context: ctx-a
`
	for name, content := range map[string]string{filepath.Join(parent, "outside.yaml"): kc, filepath.Join(dir, "kc.yaml"): kc, filepath.Join(dir, "ca.crt"): "not a certificate"} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"out.yaml": filepath.Join(parent, "outside.yaml"), "zero.yaml": "/dev/zero"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	load := func(name string) (string, error) {
		target, err := kubernetes.Resolve(kubernetes.ConnectionOptions{Block: kubernetes.Selection{Kubeconfig: name}, Dir: dir, AllowBlockKubeconfig: true})
		if err != nil {
			return "", err
		}
		done := make(chan error, 1)
		var ca string
		go func() {
			cfg, _, err := target.RESTConfig()
			if err == nil {
				ca = cfg.TLSClientConfig.CAFile
			}
			done <- err
		}()
		select {
		case err := <-done:
			return ca, err
		case <-time.After(5 * time.Second):
			t.Fatalf("loading %s blocked for 5 s", name)
			return "", nil
		}
	}
	ca, err := load("kc.yaml")
	if err != nil || ca != filepath.Join(dir, "ca.crt") {
		t.Fatalf("kc.yaml: CA file %q, %v; want %s", ca, err, filepath.Join(dir, "ca.crt"))
	}
	for name, want := range map[string]error{"fifo.yaml": files.ErrNotRegular, "out.yaml": files.ErrOutside, "zero.yaml": files.ErrOutside} {
		if _, err := load(name); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

// With no kubeconfig file at all (no ~/.kube/config, or $KUBECONFIG naming
// only missing files), RESTConfig says none was found, names the files
// tried and how to try gpuform on a simulated cluster, instead of "no
// current context (available: none)".
func TestNoKubeconfigSaysSoAndPointsAtTheSimulatedCluster(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tt := range []struct {
		name  string
		env   []string
		tried string
	}{
		{"no ~/.kube/config", []string{"HOME=" + dir}, "~/.kube/config"},
		{"KUBECONFIG=/missing", []string{"KUBECONFIG=" + missing}, missing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", dir)
			target, err := kubernetes.Resolve(kubernetes.ConnectionOptions{Env: tt.env})
			if err != nil {
				t.Fatal(err)
			}
			if tt.tried == "~/.kube/config" {
				tt.tried = filepath.Join(dir, ".kube", "config")
				target.Files = []string{tt.tried}
			}
			_, _, err = target.RESTConfig()
			if !errors.Is(err, kubernetes.ErrNoKubeconfig) {
				t.Fatalf("error = %v, want ErrNoKubeconfig", err)
			}
			for _, want := range []string{"no kubeconfig found", tt.tried, "--simulated FILE", "simulated in the cluster block"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "current context") {
				t.Errorf("error %q still speaks of a current context", err)
			}
		})
	}
}
