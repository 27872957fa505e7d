package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// addTargetFlag adds --target, repeatable, to fl.
func addTargetFlag(fl *pflag.FlagSet, targets *[]string) {
	fl.StringArrayVar(targets, "target", nil, "narrow the plan to the block at `ADDRESS` (tenant.NAME, pool.NAME, model.NAME, gpuform, as plan prints them) and what it depends on; repeatable")
}

// warnTargeted prints, as Terraform does, that p was narrowed by --target
// (a saved plan's targets too).
func (g *globals) warnTargeted(p *engine.Plan) {
	if len(p.Targets) == 0 {
		return
	}
	textsafe.Fprintf(g.stderr, "Warning: Resource targeting is in effect\n\n  This plan is narrowed to %s and what it depends on, so it may not hold every change the configuration asks for. --target is for exceptional cases (recovering from a mistake, working around an error), not routine use.\n\n", strings.Join(p.Targets, ", "))
}
