package kubernetes

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/files"
)

// Selection names a cluster: a kubeconfig file, a context in it, or a
// simulated cluster's file. Empty fields name nothing.
type Selection struct {
	Kubeconfig, Context, Simulated string
	// Ranges are where the cluster block sets each argument, by name
	// (config.Meta.AttrRanges): Resolve's errors about the block start with
	// the file, line and column. Nil for flags.
	Ranges map[string]hcl.Range
}

// BlockSelection is what cfg's cluster block names, with where (zero
// for a nil cfg or no block).
func BlockSelection(cfg *config.Config) Selection {
	if cfg == nil || cfg.Cluster == nil {
		return Selection{}
	}
	cl := cfg.Cluster
	return Selection{Kubeconfig: cl.Kubeconfig, Context: cl.Context, Simulated: cl.Simulated, Ranges: cl.AttrRanges()}
}

// MaxKubeconfigSize bounds a kubeconfig file that the cluster block names.
const MaxKubeconfigSize = 4 << 20

// ConnectionOptions are everything that may name the cluster gpuform talks
// to. Resolve picks from them, in kubectl's order with the configuration's
// cluster block slotted in between the flags and the environment.
type ConnectionOptions struct {
	// Flags are --kubeconfig, --context and --simulated: they win over
	// everything else.
	Flags Selection
	// Block is the configuration's cluster block (zero without one, or
	// when no configuration was read). It may name a context; a simulated
	// cluster only inside Dir; a kubeconfig file only inside Dir and only
	// with AllowBlockKubeconfig and not Untrusted (see Resolve).
	Block Selection
	// AllowBlockKubeconfig is --allow-config-kubeconfig: the operator
	// trusts the configuration to name the kubeconfig file, whose exec
	// credential plugins and auth providers run, and whose certificate,
	// key and token files are read and sent to its server.
	AllowBlockKubeconfig bool
	// Untrusted says the configuration is a pull request's or a git ref's
	// (plan --base, --repo, --ref; drift --repo, --ref): its cluster block
	// never names the kubeconfig file, AllowBlockKubeconfig or not.
	Untrusted bool
	// Dir is the configuration directory: relative paths of the cluster
	// block and of --simulated are taken from it (--kubeconfig is taken as
	// given, from the process's working directory).
	Dir string
	// SavedContext is the context a saved plan was made against (its
	// stack.Cluster Context): it stands in for the cluster block, which a
	// saved plan does not read.
	SavedContext string
	// Env is the process environment (os.Environ form), for $KUBECONFIG.
	Env []string
	// InCluster prefers the pod's service account, when the process runs
	// in a pod and neither --kubeconfig nor --context nor a simulated
	// cluster was given (drift's CronJob, the agent's DaemonSet). Outside a
	// pod the kubeconfig is used as usual.
	InCluster bool
}

// Target is the cluster a client connects to, resolved once from
// ConnectionOptions: a simulated cluster, or a Kubernetes API server
// reached through the pod's service account or a kubeconfig context.
type Target struct {
	// Simulated is the simulated cluster's file (providers/sim), a path
	// inside SimulatedDir, which confines every file of the simulated
	// cluster (sim.OpenIn); when set, nothing else applies.
	Simulated, SimulatedDir string
	// InCluster tries the pod's service account first; outside a pod the
	// kubeconfig below is used.
	InCluster bool
	// Kubeconfig is the one kubeconfig file named by --kubeconfig ("~/" is
	// the home directory) or the cluster block; empty: Files.
	Kubeconfig string
	// KubeconfigDir, when set, confines Kubeconfig, a path inside it (the
	// cluster block's, inside the configuration directory): gpuform reads
	// it through internal/files, a regular file of at most
	// MaxKubeconfigSize bytes with no symbolic link leading out, and
	// client-go never opens the path.
	KubeconfigDir string
	// Files are the kubeconfig files merged when Kubeconfig is empty, as
	// kubectl merges them: $KUBECONFIG's list, else ~/.kube/config. Nil
	// reads $KUBECONFIG from the process's environment.
	Files []string
	// Context is the kubeconfig context; empty: the current context.
	Context string
	// refused is why the cluster block's kubeconfig may not be read, when
	// the pod's service account is tried first: in a pod the kubeconfig is
	// never read, so only outside one does RESTConfig return it.
	refused error
	// From says, for each choice, where it came from: "--kubeconfig",
	// "cluster block", "$KUBECONFIG", "~/.kube/config", "--context",
	// "saved plan", "current context", "--simulated", "in-cluster".
	KubeconfigFrom, ContextFrom string
}

// Resolve picks the cluster, first that is set wins:
//
//   - a simulated cluster: --simulated; else, with neither --kubeconfig nor
//     --context, the cluster block's simulated file or a saved plan made
//     against a simulated cluster;
//   - the pod's service account, when opts.InCluster and no flag names a
//     cluster (tried first; outside a pod the kubeconfig below is used);
//   - the kubeconfig file: --kubeconfig, the cluster block's kubeconfig,
//     $KUBECONFIG (a list of files), ~/.kube/config;
//   - the context: --context, a saved plan's context, the cluster block's
//     context, the kubeconfig's current context.
//
// A configuration cannot make gpuform run a program or read outside its
// directory: the cluster block's simulated file must be inside opts.Dir,
// and its kubeconfig (which may run programs and send credentials) is an
// error unless it is inside opts.Dir, the operator allowed it
// (AllowBlockKubeconfig) and the configuration is not Untrusted. The
// error starts with the block's file:line:col and says what to do. When
// the pod's service account is tried first (opts.InCluster), the error
// comes from RESTConfig, and only outside a pod: in one, the kubeconfig
// is not read.
func Resolve(opts ConnectionOptions) (Target, error) {
	flagged := opts.Flags.Kubeconfig != "" || opts.Flags.Context != ""
	saved, savedSim := strings.CutPrefix(opts.SavedContext, stack.SimulatedContextPrefix)
	switch {
	case opts.Flags.Simulated != "":
		p := inDir(opts.Dir, opts.Flags.Simulated)
		return Target{Simulated: filepath.Base(p), SimulatedDir: filepath.Dir(p), KubeconfigFrom: "--simulated"}, nil
	case !flagged && opts.Block.Simulated != "":
		if !local(opts.Block.Simulated) {
			return Target{}, opts.Block.errorf("simulated", "the cluster block's simulated file %q is outside the configuration directory: name a file inside it (a relative path without ..), or pass --simulated FILE", opts.Block.Simulated)
		}
		return Target{Simulated: filepath.Clean(opts.Block.Simulated), SimulatedDir: orDot(opts.Dir), KubeconfigFrom: "cluster block"}, nil
	case !flagged && savedSim:
		return Target{Simulated: filepath.Base(saved), SimulatedDir: filepath.Dir(saved), KubeconfigFrom: "saved plan"}, nil
	}
	t := Target{InCluster: opts.InCluster && !flagged && opts.Block.Simulated == ""}
	switch env := lookupEnv(opts.Env, clientcmd.RecommendedConfigPathEnvVar); {
	case opts.Flags.Kubeconfig != "":
		t.Kubeconfig, t.KubeconfigFrom = opts.Flags.Kubeconfig, "--kubeconfig"
	case opts.Block.Kubeconfig != "":
		if err := opts.checkBlockKubeconfig(); err != nil && !t.InCluster {
			return Target{}, err
		} else if err != nil {
			t.refused = err
		}
		t.Kubeconfig, t.KubeconfigDir, t.KubeconfigFrom = filepath.Clean(opts.Block.Kubeconfig), orDot(opts.Dir), "cluster block"
	case env != "":
		t.Files, t.KubeconfigFrom = dedupe(filepath.SplitList(env)), "$KUBECONFIG"
	default:
		t.Files, t.KubeconfigFrom = []string{clientcmd.RecommendedHomeFile}, "~/.kube/config"
	}
	switch {
	case opts.Flags.Context != "":
		t.Context, t.ContextFrom = opts.Flags.Context, "--context"
	case opts.SavedContext != "" && !savedSim:
		t.Context, t.ContextFrom = opts.SavedContext, "saved plan"
	case opts.Block.Context != "":
		t.Context, t.ContextFrom = opts.Block.Context, "cluster block"
	default:
		t.ContextFrom = "current context"
	}
	return t, nil
}

// checkBlockKubeconfig is the rule for a kubeconfig file the cluster block
// names: a kubeconfig can run programs (exec credential plugins, auth
// providers) and send the certificates, keys and tokens of files it names
// to any server, so the configuration may name one only when the operator
// allows it, never for a pull request or a git ref, and only inside its
// directory.
func (opts ConnectionOptions) checkBlockKubeconfig() error {
	b := opts.Block
	switch {
	case opts.Untrusted:
		return b.errorf("kubeconfig", "the cluster block names the kubeconfig file %q, and a configuration read for a pull request or from a git ref (plan --base, --repo, --ref; drift --repo, --ref) may not choose the kubeconfig, even with --allow-config-kubeconfig: a kubeconfig can run programs (exec credential plugins) and send credentials to any server. Pass --kubeconfig FILE to name the cluster (the cluster block's context still applies), or remove kubeconfig from the cluster block", b.Kubeconfig)
	case !opts.AllowBlockKubeconfig:
		return b.errorf("kubeconfig", "the cluster block names the kubeconfig file %q, which gpuform reads only with --allow-config-kubeconfig: a kubeconfig can run programs (exec credential plugins) and send credentials to any server. Pass --kubeconfig FILE, or remove kubeconfig from the cluster block and set KUBECONFIG; if you trust this configuration, pass --allow-config-kubeconfig", b.Kubeconfig)
	case !local(b.Kubeconfig):
		return b.errorf("kubeconfig", "the cluster block's kubeconfig %q is outside the configuration directory: the cluster block may name only a file inside it (a relative path without ..). Pass --kubeconfig FILE or set KUBECONFIG to use a kubeconfig elsewhere", b.Kubeconfig)
	}
	return nil
}

// errorf is an error about the block's argument attr, starting with where
// it is set when that is known.
func (s Selection) errorf(attr, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if r, ok := s.Ranges[attr]; ok && r.Filename != "" {
		return fmt.Errorf("%s: %s", r, msg)
	}
	return errors.New(msg)
}

// local reports whether p, a path of the configuration, stays inside its
// directory: relative, no "..", and not "~/" (which would name the home
// directory in a message and a directory called "~" on disk).
func local(p string) bool {
	return filepath.IsLocal(p) && p != "~" && !strings.HasPrefix(p, "~/")
}

// orDot is dir, or "." for the working directory.
func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// inDir resolves a path of the configuration against its directory; "~/"
// paths are left for expandHome.
func inDir(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// dedupe keeps the first of each path, as client-go does with $KUBECONFIG.
func dedupe(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// RESTConfig loads the target's client configuration and names its
// context ("in-cluster" for the pod's service account). A context that is
// not in the kubeconfig is an error listing those there are. Every client
// gpuform builds (plan, apply, drift, the agent) starts from it.
func (t Target) RESTConfig() (*rest.Config, string, error) {
	if t.Simulated != "" {
		return nil, "", fmt.Errorf("%s is a simulated cluster, not a Kubernetes API server", filepath.Join(t.SimulatedDir, t.Simulated))
	}
	var podErr error
	if t.InCluster {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			return cfg, "in-cluster", nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			podErr = err
		}
	}
	var cfg *rest.Config
	var name string
	err := t.refused
	if err == nil {
		cfg, name, err = t.kubeconfig()
	}
	if err != nil && podErr != nil {
		return nil, "", fmt.Errorf("read the pod's service account: %w", podErr)
	}
	return cfg, name, err
}

// loader is the client configuration of the target's kubeconfig and the
// file's name for messages: client-go's loading rules for the files the
// operator named, or, for a confined kubeconfig (KubeconfigDir), the
// content gpuform read itself through internal/files.
func (t Target) loader() (clientcmd.ClientConfig, string, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: t.Context}
	if t.KubeconfigDir != "" {
		name := filepath.Join(t.KubeconfigDir, t.Kubeconfig)
		b, err := files.ReadIn(t.KubeconfigDir, t.Kubeconfig, MaxKubeconfigSize)
		if err != nil {
			return nil, name, err
		}
		cfg, err := clientcmd.Load(b)
		if err != nil {
			return nil, name, err
		}
		// Relative paths in it (certificate-authority, client-key) are
		// taken from its directory, as client-go does for a file it reads.
		origin, err := filepath.Abs(name)
		if err != nil {
			return nil, name, err
		}
		for _, c := range cfg.Clusters {
			c.LocationOfOrigin = origin
		}
		for _, a := range cfg.AuthInfos {
			a.LocationOfOrigin = origin
		}
		if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
			return nil, name, err
		}
		return clientcmd.NewNonInteractiveClientConfig(*cfg, t.Context, overrides, nil), name, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if t.Kubeconfig != "" {
		rules.ExplicitPath = expandHome(t.Kubeconfig)
	} else if t.Files != nil {
		rules.Precedence = t.Files
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides), kubeconfigName(rules), nil
}

// kubeconfig loads the target's kubeconfig context.
func (t Target) kubeconfig() (*rest.Config, string, error) {
	if err := t.noKubeconfig(); err != nil {
		return nil, "", err
	}
	loader, file, err := t.loader()
	var raw clientcmdapi.Config
	if err == nil {
		raw, err = loader.RawConfig()
	}
	if err != nil {
		return nil, "", fmt.Errorf("read kubeconfig %s: %w. Pass --kubeconfig FILE or set KUBECONFIG", file, err)
	}
	ctxName := t.Context
	if ctxName == "" {
		ctxName = raw.CurrentContext
	}
	if _, ok := raw.Contexts[ctxName]; !ok || ctxName == "" {
		names := slices.Sorted(maps.Keys(raw.Contexts))
		if ctxName == "" {
			return nil, "", fmt.Errorf("the kubeconfig %s has no current context. Pick one with --context NAME (available: %s) or with the cluster block's context", file, listOrNone(names))
		}
		return nil, "", fmt.Errorf("context %q is not in the kubeconfig %s. Available contexts: %s. Pass --context NAME, or fix the cluster block's context", ctxName, file, listOrNone(names))
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load context %q from %s: %w", ctxName, file, err)
	}
	return cfg, ctxName, nil
}

// ErrNoKubeconfig is the error of RESTConfig when none of the kubeconfig
// files tried ($KUBECONFIG's, else ~/.kube/config) exists.
var ErrNoKubeconfig = errors.New("no kubeconfig found")

// noKubeconfig is ErrNoKubeconfig, naming the files tried, when the
// target merges kubeconfig files (no --kubeconfig, no cluster block's) and
// none of them exists: client-go would read that as an empty kubeconfig
// with "no current context". It says how to try gpuform without a cluster.
func (t Target) noKubeconfig() error {
	if t.Kubeconfig != "" || t.KubeconfigDir != "" {
		return nil
	}
	tried := t.Files
	if tried == nil {
		tried = clientcmd.NewDefaultClientConfigLoadingRules().Precedence
	}
	for _, f := range tried {
		if _, err := os.Stat(expandHome(f)); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	return fmt.Errorf("%w (tried %s: %s). Pass --kubeconfig FILE or set KUBECONFIG to name a cluster; to try gpuform without one, pass --simulated FILE or set simulated in the cluster block (a simulated cluster's file, as examples/quickstart/cluster.sim.hcl)", ErrNoKubeconfig, t.KubeconfigFrom, listOrNone(tried))
}

// NewClient connects to the target (see RESTConfig) with opts; opts'
// Kubeconfig and Context are ignored: the target has them.
func NewClient(t Target, opts Options) (*Client, error) {
	cfg, name, err := t.RESTConfig()
	if err != nil {
		return nil, err
	}
	return NewForConfig(cfg, name, opts)
}
