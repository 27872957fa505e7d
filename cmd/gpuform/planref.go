package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
)

// bindingFlags are apply's flags for a signed plan's ref and age
// (engine.PlanFile.CheckBinding).
type bindingFlags struct {
	refName       string
	allowOtherRef bool
	maxAge        time.Duration
}

func (f *bindingFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.refName, "ref-name", "", "the git ref (branch) this runs from, which a signed plan must have been made from (default: $"+engine.RefEnv+", else the checked-out branch)")
	fl.BoolVar(&f.allowOtherRef, "allow-other-ref", false, "apply a signed plan made from another ref, or when either ref is unknown")
	fl.DurationVar(&f.maxAge, "plan-max-age", engine.DefaultPlanMaxAge, "refuse a signed plan made longer ago than this (0: no limit)")
}

// refName is the git ref gpuform runs from: flag (--ref-name), else
// GPUFORM_REF, else asked (plan's --ref), else the branch checked out
// where the configuration is; "" when none is known (a detached HEAD
// without GPUFORM_REF, a directory outside git).
func (g *globals) refName(flag, asked string) string {
	for _, r := range []string{flag, lookupEnv(g.env, engine.RefEnv), asked} {
		if r = engine.NormalizeRef(r); r != "" {
			return r
		}
	}
	return git.Branch(g.dir())
}

// checkBinding applies the signed-plan binding rule (ref and age) to pf
// before any cluster call.
func (g *globals) checkBinding(pf *engine.PlanFile, f *bindingFlags) error {
	return pf.CheckBinding(engine.PlanBinding{Ref: g.refName(f.refName, ""), AllowOtherRef: f.allowOtherRef, MaxAge: f.maxAge})
}

// warnUnbound warns, after plan --out signed a plan, when the plan names
// no ref: apply will refuse it without --allow-other-ref.
func (g *globals) warnUnbound(path string, pf *engine.PlanFile) {
	if pf.Signed() && pf.Ref == "" {
		textsafe.Fprintf(g.stderr, "Warning: %s is signed but names no ref (no branch is checked out and --ref-name and %s are not set), so apply refuses it unless told --allow-other-ref.\n", path, engine.RefEnv)
	}
}
