package engine

import (
	"fmt"
	"strings"
	"time"
)

// RefEnv is the environment variable that names the git ref (branch) a
// plan is made from or applied from when gpuform cannot read it from the
// checkout (a detached HEAD in CI); the flag --ref-name overrides it.
const RefEnv = "GPUFORM_REF"

// DefaultPlanMaxAge is how old a signed plan apply accepts by default.
const DefaultPlanMaxAge = 24 * time.Hour

// planClockSkew is how far in the future a signed plan's creation time may
// lie (clocks of the machines that plan and apply differ a little).
const planClockSkew = 5 * time.Minute

// PlanBinding is what apply knows to check a signed plan's ref and age
// against (CheckBinding).
type PlanBinding struct {
	// Ref is the ref apply runs from; "" when it cannot tell.
	Ref string
	// AllowOtherRef accepts a plan from another ref, or from an unknown one.
	AllowOtherRef bool
	// MaxAge is the oldest plan accepted; 0 is no limit.
	MaxAge time.Duration
	// Now is the time to compare with (time.Now() when zero).
	Now time.Time
}

// NormalizeRef is a ref as plan files record it: white space trimmed and
// refs/heads/ removed, so "refs/heads/main" and "main" are one ref.
func NormalizeRef(ref string) string {
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}

// CheckBinding applies the binding rule to a signed plan (an unsigned one
// proves nothing, so it is bound to nothing): it must have been made no
// longer than b.MaxAge ago and not in the future, and from the ref apply
// runs from: a plan that names no ref, or an apply that cannot tell its
// own, is refused too unless b.AllowOtherRef. Call it after Authenticate:
// the ref and the creation time are covered by the signature.
func (pf *PlanFile) CheckBinding(b PlanBinding) error {
	if !pf.Signed() {
		return nil
	}
	now := b.Now
	if now.IsZero() {
		now = time.Now()
	}
	age := now.Sub(pf.Created)
	switch {
	case age < -planClockSkew:
		return fmt.Errorf("the signed plan was made at %s, in the future (this machine's time is %s): check the clocks, and make the plan again", pf.Created.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case b.MaxAge > 0 && age > b.MaxAge:
		return fmt.Errorf("the signed plan was made at %s, %s ago, longer than --plan-max-age %s: make the plan again, or pass a longer --plan-max-age (0 for no limit)", pf.Created.UTC().Format(time.RFC3339), age.Truncate(time.Second), b.MaxAge)
	}
	if b.AllowOtherRef {
		return nil
	}
	ref := NormalizeRef(b.Ref)
	switch {
	case pf.Ref == "":
		return fmt.Errorf("the signed plan does not say which ref it was made from, so it cannot be bound to this one: make it again on a branch, with --ref-name REF or %s set, or pass --allow-other-ref", RefEnv)
	case ref == "":
		return fmt.Errorf("the signed plan was made from ref %q, but apply cannot tell which ref it runs from (not a checkout of a branch): pass --ref-name REF or set %s, or pass --allow-other-ref to apply it anyway", pf.Ref, RefEnv)
	case ref != pf.Ref:
		return fmt.Errorf("the signed plan was made from ref %q, but apply runs from %q: make the plan from %q, or pass --allow-other-ref to apply it anyway", pf.Ref, ref, ref)
	}
	return nil
}
