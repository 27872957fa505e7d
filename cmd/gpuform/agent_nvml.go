//go:build linux && cgo

package main

import (
	"context"
	"errors"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/envlist"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/kubernetes"
	"github.com/gpuform/gpuform/providers/nvml"
)

// runNodeAgent runs the node agent over NVML. This file, for linux with cgo
// only, is cmd's one way into providers/nvml (go-nvml needs cgo).
func runNodeAgent(ctx context.Context, g *globals, f agentFlags) error {
	node := f.node
	if node == "" {
		node = envlist.Lookup(g.env, "NODE_NAME")
	}
	if node == "" {
		return errors.New("gpuform agent needs its node's name: pass --node NAME or set NODE_NAME (in a DaemonSet, from the downward API field spec.nodeName)")
	}
	lib, err := nvml.OpenSpec(f.simulate, node)
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
	opts := nvml.AgentOptions{Node: node, AllowBusy: f.allowBusy, Catalog: mig.Default(), Resync: f.resync, Logf: nvml.StampedLogger(g.stderr)}
	err = nvml.RunAgent(ctx, lib, client, opts)
	return agentNVMLError(g, node, err)
}

// localInventory reads this machine's GPUs through NVML (inventory --local).
func localInventory() (*agentv1.Inventory, error) { return nvml.ReadLocal(mig.Default()) }

// agentNVMLError prints NVML being unavailable as one line and exits 1.
func agentNVMLError(g *globals, node string, err error) error {
	var ue *nvml.UnavailableError
	if !errors.As(err, &ue) {
		return err
	}
	textsafe.Fprintf(g.stderr, "Error: gpuform agent: NVML is not available on node %s: %s; run the agent on a GPU node with the NVIDIA driver (in Kubernetes: runtimeClassName nvidia, see examples/deploy/agent.yaml)\n", node, ue.Reason)
	return &exitError{code: 1}
}
