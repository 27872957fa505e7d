package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/providers/nvml"
)

// agentRequestTimeout bounds each read and write of the agent's node.
const agentRequestTimeout = 30 * time.Second

func newAgentCommand(g *globals) *cobra.Command {
	var (
		node, simulate string
		allowBusy      bool
		resync         time.Duration
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the node agent: publish this node's GPUs and apply the MIG layout gpuform asks for",
		Long: "agent runs on every GPU node (a DaemonSet, see examples/deploy/agent.yaml). It publishes the\n" +
			"node's GPU inventory, read through NVML, in annotation gpuform.dev/inventory, and applies the MIG\n" +
			"layout that gpuform apply writes in annotation gpuform.dev/mig-layout (pools with\n" +
			"mig_backend = \"agent\"), reporting in gpuform.dev/mig-state: pending, success, reboot-required or\n" +
			"failed: <reason>. It watches its own Node only, and stops cleanly on SIGTERM.\n\n" +
			"Inside a pod it uses the pod's service account; elsewhere --kubeconfig and --context (or\n" +
			"$KUBECONFIG). --simulate-gpus MODEL:COUNT replaces NVML with go-nvml's simulated GPUs, for\n" +
			"development and tests without a GPU.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if node == "" {
				node = lookupEnv(g.env, "NODE_NAME")
			}
			if node == "" {
				return errors.New("gpuform agent needs its node's name: pass --node NAME or set NODE_NAME (in a DaemonSet, from the downward API field spec.nodeName)")
			}
			lib, err := agentNVML(simulate)
			if err == nil {
				// Check NVML before anything else, for a clear error.
				var s *nvml.Session
				if s, err = nvml.Open(lib); err == nil {
					err = s.Close()
				}
			}
			if err != nil {
				return agentNVMLError(g, node, err)
			}
			cfg, err := g.agentRESTConfig()
			if err != nil {
				return err
			}
			cs, err := k8s.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("build the Kubernetes client for %s: %w", cfg.Host, err)
			}
			logf := agentLogger(g)
			err = nvml.RunAgent(cmd.Context(), lib, &kubeNode{cs: cs, name: node}, nvml.AgentOptions{
				Node:      node,
				AllowBusy: allowBusy,
				Catalog:   mig.Default(),
				Resync:    resync,
				Logf:      logf,
			})
			return agentNVMLError(g, node, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "the `NAME` of the node the agent runs on (default $NODE_NAME)")
	f.BoolVar(&allowBusy, "allow-busy", false, "change the MIG layout of GPUs that run processes (default: refuse, state \"failed: GPUs busy: ...\", retried later)")
	f.DurationVar(&resync, "resync", time.Minute, "how often to read the GPUs again and publish the inventory when it changed")
	f.StringVar(&simulate, "simulate-gpus", "", "development: use `MODEL:COUNT` simulated GPUs (go-nvml's simulated servers, e.g. A100-80GB:8) instead of NVML")
	return cmd
}

// agentNVMLError prints NVML being unavailable as one line and exits 1;
// other errors are returned as they are.
func agentNVMLError(g *globals, node string, err error) error {
	var ue *nvml.UnavailableError
	if !errors.As(err, &ue) {
		return err
	}
	fmt.Fprintf(g.stderr, "Error: gpuform agent: NVML is not available on node %s: %s; run the agent on a GPU node with the NVIDIA driver (in Kubernetes: runtimeClassName nvidia, see examples/deploy/agent.yaml)\n", node, ue.Reason)
	return &exitError{code: 1}
}

// agentNVML returns the simulated GPUs spec asks for, or this machine's
// NVML library.
func agentNVML(spec string) (gonvml.Interface, error) {
	if spec == "" {
		return nvml.Local()
	}
	model, count, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 1 || n > 16 {
		return nil, fmt.Errorf("--simulate-gpus %q: want MODEL:COUNT with a count from 1 to 16, e.g. A100-80GB:8", spec)
	}
	lib, err := nvml.Simulated(mig.Default(), model, n, "")
	if err != nil {
		return nil, fmt.Errorf("--simulate-gpus %q: %w", spec, err)
	}
	return lib, nil
}

// agentRESTConfig is the pod's service account when running in a pod and no
// --kubeconfig or --context was given, else the kubeconfig.
func (g *globals) agentRESTConfig() (*rest.Config, error) {
	var cfg *rest.Config
	if g.kubeconfig == "" && g.context == "" {
		c, err := rest.InClusterConfig()
		switch {
		case err == nil:
			cfg = c
		case !errors.Is(err, rest.ErrNotInCluster):
			return nil, fmt.Errorf("read the pod's service account: %w", err)
		}
	}
	if cfg == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = g.kubeconfig
		c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: g.context}).ClientConfig()
		switch {
		case err != nil && g.kubeconfig == "" && g.context == "":
			return nil, fmt.Errorf("not in a pod, and no usable kubeconfig: %w; pass --kubeconfig FILE or set KUBECONFIG", err)
		case err != nil:
			return nil, fmt.Errorf("load the kubeconfig: %w", err)
		}
		cfg = c
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "gpuform-agent"
	// No client-wide timeout: it would cut the watch. Each request has its
	// own deadline instead.
	cfg.Timeout = 0
	if wrap := g.kubeTransport(); wrap != nil {
		cfg.Wrap(wrap)
	}
	return cfg, nil
}

// agentLogger writes timestamped lines to stderr.
func agentLogger(g *globals) func(string, ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(g.stderr, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// kubeNode is the agent's nvml.NodeClient: its own Node through client-go.
type kubeNode struct {
	cs   k8s.Interface
	name string
}

func nodeInfo(n *corev1.Node) *nvml.NodeInfo {
	return &nvml.NodeInfo{ResourceVersion: n.ResourceVersion, Annotations: n.Annotations}
}

func (k *kubeNode) Get(ctx context.Context) (*nvml.NodeInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, agentRequestTimeout)
	defer cancel()
	n, err := k.cs.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return nodeInfo(n), nil
}

// Watch watches the one node (fieldSelector metadata.name), for 5 to 10
// minutes at a time so that connections are renewed.
func (k *kubeNode) Watch(ctx context.Context, resourceVersion string) (<-chan nvml.NodeEvent, error) {
	timeout := int64(300 + rand.IntN(300))
	w, err := k.cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", k.name).String(),
		ResourceVersion: resourceVersion,
		TimeoutSeconds:  &timeout,
	})
	if err != nil {
		return nil, err
	}
	out := make(chan nvml.NodeEvent)
	go func() {
		defer close(out)
		defer w.Stop()
		for {
			var ev watch.Event
			var ok bool
			select {
			case <-ctx.Done():
				return
			case ev, ok = <-w.ResultChan():
				if !ok {
					return
				}
			}
			var ne nvml.NodeEvent
			switch ev.Type {
			case watch.Added, watch.Modified:
				n, isNode := ev.Object.(*corev1.Node)
				if !isNode {
					ne.Err = fmt.Errorf("unexpected watch object %T", ev.Object)
					break
				}
				ne.Node = nodeInfo(n)
			case watch.Deleted:
				ne.Deleted = true
			case watch.Error:
				ne.Err = apierrors.FromObject(ev.Object)
			default:
				continue
			}
			select {
			case out <- ne:
			case <-ctx.Done():
				return
			}
			if ne.Err != nil {
				return
			}
		}
	}()
	return out, nil
}

// Apply sets the agent's annotations with server-side apply, guarded by the
// node's current resourceVersion: server-side apply would otherwise create a
// Node that was deleted. A conflict (the node changed in between) reads it
// again.
func (k *kubeNode) Apply(ctx context.Context, annotations map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, agentRequestTimeout)
	defer cancel()
	for range 5 {
		cur, err := k.cs.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ac := corev1ac.Node(k.name).WithResourceVersion(cur.ResourceVersion).WithAnnotations(annotations)
		_, err = k.cs.CoreV1().Nodes().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: agentv1.FieldManager, Force: true})
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("node %s kept changing while the agent annotated it", k.name)
}
