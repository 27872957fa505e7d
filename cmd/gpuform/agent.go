package main

import (
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/kubernetes"
	"github.com/gpuform/gpuform/providers/nvml"
)

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
			lib, err := nvml.FromSpec(simulate, node)
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
			target, err := g.target(nil, connection{inCluster: true})
			var client *kubernetes.AgentNode
			if err == nil {
				client, err = kubernetes.NewAgentNode(target, node, g.kubeTransport())
			}
			if err != nil {
				return err
			}
			err = nvml.RunAgent(cmd.Context(), lib, client, nvml.AgentOptions{
				Node:      node,
				AllowBusy: allowBusy,
				Catalog:   mig.Default(),
				Resync:    resync,
				Logf:      nvml.StampedLogger(g.stderr),
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
	textsafe.Fprintf(g.stderr, "Error: gpuform agent: NVML is not available on node %s: %s; run the agent on a GPU node with the NVIDIA driver (in Kubernetes: runtimeClassName nvidia, see examples/deploy/agent.yaml)\n", node, ue.Reason)
	return &exitError{code: 1}
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
