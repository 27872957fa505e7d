package main

import (
	"time"

	"github.com/spf13/cobra"
)

func newAgentCommand(g *globals) *cobra.Command {
	var a agentFlags
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
			return runNodeAgent(cmd.Context(), g, a)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.node, "node", "", "the `NAME` of the node the agent runs on (default $NODE_NAME)")
	f.BoolVar(&a.allowBusy, "allow-busy", false, "change the MIG layout of GPUs that run processes (default: refuse, state \"failed: GPUs busy: ...\", retried later)")
	f.DurationVar(&a.resync, "resync", time.Minute, "how often to read the GPUs again and publish the inventory when it changed")
	f.StringVar(&a.simulate, "simulate-gpus", "", "development: use `MODEL:COUNT` simulated GPUs (go-nvml's simulated servers, e.g. A100-80GB:8) instead of NVML")
	return cmd
}

// agentFlags are gpuform agent's flags.
type agentFlags struct {
	node, simulate string
	allowBusy      bool
	resync         time.Duration
}
