//go:build !(linux && cgo)

package main

import (
	"context"
	"fmt"
	"runtime"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
)

// errNoNVML: NVML (go-nvml) needs cgo on linux; everything else needs neither.
func errNoNVML(what string) error {
	return fmt.Errorf("%s needs NVML, which this gpuform (%s/%s, built without cgo) does not have: run it on a linux GPU node from a build with cgo (CGO_ENABLED=1 and a C compiler; the agent image, build/agent.Dockerfile, is one); planning, applying and the simulated cluster need no NVML", what, runtime.GOOS, runtime.GOARCH)
}

func runNodeAgent(context.Context, *globals, agentFlags) error { return errNoNVML("gpuform agent") }

func localInventory() (*agentv1.Inventory, error) { return nil, errNoNVML("gpuform inventory --local") }
