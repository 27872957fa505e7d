package stack

import (
	"github.com/gpuform/gpuform/engine"
)

// shape makes p, just diffed, what opts ask: a destroy plan (marked, and
// refused at once, as an *engine.UnsafeError, when it deletes a protected
// tenant's namespace: engine.DestroyProtected), narrowed to opts.Targets
// (engine.Narrow). desired is the configuration's desired state.
func shape(p *engine.Plan, desired *engine.Desired, opts PlanOptions) error {
	p.Destroy = opts.Destroy
	if err := engine.Narrow(p, desired, opts.Targets); err != nil {
		return err
	}
	if !opts.Destroy {
		return nil
	}
	if names := engine.DestroyProtected(desired, p); len(names) > 0 {
		return &engine.UnsafeError{Reasons: []string{engine.ProtectedReason(names)}}
	}
	return nil
}
