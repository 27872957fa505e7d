//go:build linux && cgo

package main

import (
	"context"
	"errors"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/kubernetes"
	"github.com/gpuform/gpuform/providers/nvml"
)

// runNodeAgent runs the node agent over NVML (go-nvml, which needs cgo): this
// file is the only way into providers/nvml, and builds for linux with cgo
// only; agent_nonvml.go stands in everywhere else.
func runNodeAgent(ctx context.Context, g *globals, f agentFlags) error {
	node := f.node
	if node == "" {
		node = lookupEnv(g.env, "NODE_NAME")
	}
	if node == "" {
		return errors.New("gpuform agent needs its node's name: pass --node NAME or set NODE_NAME (in a DaemonSet, from the downward API field spec.nodeName)")
	}
	lib, err := nvml.FromSpec(f.simulate, node)
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
	err = nvml.RunAgent(ctx, lib, client, nvml.AgentOptions{
		Node:      node,
		AllowBusy: f.allowBusy,
		Catalog:   mig.Default(),
		Resync:    f.resync,
		Logf:      nvml.StampedLogger(g.stderr),
	})
	return agentNVMLError(g, node, err)
}

// localInventory reads this machine's GPUs through NVML (inventory --local).
func localInventory() (*agentv1.Inventory, error) {
	lib, err := nvml.Local()
	if err != nil {
		return nil, err
	}
	return nvml.Read(lib, mig.Default())
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
