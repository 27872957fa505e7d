package kubernetes

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuform/gpuform/engine/stack"
)

// Selection names a cluster: a kubeconfig file, a context in it, or a
// simulated cluster's file. Empty fields name nothing.
type Selection struct {
	Kubeconfig, Context, Simulated string
}

// ConnectionOptions are everything that may name the cluster gpuform talks
// to. Resolve picks from them, in kubectl's order with the configuration's
// cluster block slotted in between the flags and the environment.
type ConnectionOptions struct {
	// Flags are --kubeconfig, --context and --simulated: they win over
	// everything else.
	Flags Selection
	// Block is the configuration's cluster block (zero without one, or
	// when no configuration was read).
	Block Selection
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
	// Simulated is the simulated cluster's file (providers/sim); when set,
	// nothing else applies.
	Simulated string
	// InCluster tries the pod's service account first; outside a pod the
	// kubeconfig below is used.
	InCluster bool
	// Kubeconfig is the one kubeconfig file named by --kubeconfig or the
	// cluster block ("~/" is the home directory); empty: Files.
	Kubeconfig string
	// Files are the kubeconfig files merged when Kubeconfig is empty, as
	// kubectl merges them: $KUBECONFIG's list, else ~/.kube/config. Nil
	// reads $KUBECONFIG from the process's environment.
	Files []string
	// Context is the kubeconfig context; empty: the current context.
	Context string
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
func Resolve(opts ConnectionOptions) Target {
	flagged := opts.Flags.Kubeconfig != "" || opts.Flags.Context != ""
	saved, savedSim := strings.CutPrefix(opts.SavedContext, stack.SimulatedContextPrefix)
	switch {
	case opts.Flags.Simulated != "":
		return Target{Simulated: inDir(opts.Dir, opts.Flags.Simulated), KubeconfigFrom: "--simulated"}
	case !flagged && opts.Block.Simulated != "":
		return Target{Simulated: inDir(opts.Dir, opts.Block.Simulated), KubeconfigFrom: "cluster block"}
	case !flagged && savedSim:
		return Target{Simulated: saved, KubeconfigFrom: "saved plan"}
	}
	t := Target{InCluster: opts.InCluster && !flagged && opts.Block.Simulated == ""}
	switch env := lookupEnv(opts.Env, clientcmd.RecommendedConfigPathEnvVar); {
	case opts.Flags.Kubeconfig != "":
		t.Kubeconfig, t.KubeconfigFrom = opts.Flags.Kubeconfig, "--kubeconfig"
	case opts.Block.Kubeconfig != "":
		t.Kubeconfig, t.KubeconfigFrom = inDir(opts.Dir, opts.Block.Kubeconfig), "cluster block"
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
	return t
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
		return nil, "", fmt.Errorf("%s is a simulated cluster, not a Kubernetes API server", t.Simulated)
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
	cfg, name, err := t.kubeconfig()
	if err != nil && podErr != nil {
		return nil, "", fmt.Errorf("read the pod's service account: %w", podErr)
	}
	return cfg, name, err
}

// kubeconfig loads the target's kubeconfig context.
func (t Target) kubeconfig() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if t.Kubeconfig != "" {
		rules.ExplicitPath = expandHome(t.Kubeconfig)
	} else if t.Files != nil {
		rules.Precedence = t.Files
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: t.Context}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("read kubeconfig %s: %w. Pass --kubeconfig FILE or set KUBECONFIG", kubeconfigName(rules), err)
	}
	ctxName := t.Context
	if ctxName == "" {
		ctxName = raw.CurrentContext
	}
	if _, ok := raw.Contexts[ctxName]; !ok || ctxName == "" {
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		if ctxName == "" {
			return nil, "", fmt.Errorf("the kubeconfig %s has no current context. Pick one with --context NAME (available: %s) or with the cluster block's context", kubeconfigName(rules), listOrNone(names))
		}
		return nil, "", fmt.Errorf("context %q is not in the kubeconfig %s. Available contexts: %s. Pass --context NAME, or fix the cluster block's context", ctxName, kubeconfigName(rules), listOrNone(names))
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load context %q from %s: %w", ctxName, kubeconfigName(rules), err)
	}
	return cfg, ctxName, nil
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
