package mig

// Reason names the constraint a MIG layout breaks.
type Reason string

// The reasons Solve reports, in the order it checks them.
const (
	// ReasonNotMIGCapable: the GPU model has no MIG (time-slicing only).
	ReasonNotMIGCapable Reason = "not-mig-capable"
	// ReasonUnknownProfile: the GPU model has no profile of that name.
	ReasonUnknownProfile Reason = "unknown-profile"
	// ReasonInvalidCount: a profile is asked for a negative number of times.
	ReasonInvalidCount Reason = "invalid-count"
	// ReasonOverMax: a profile is asked for more often than one GPU holds.
	ReasonOverMax Reason = "over-max"
	// ReasonMultipleME: more than one media-extension ("+me") instance.
	ReasonMultipleME Reason = "multiple-media-extensions"
	// ReasonMediaEngines: a "+me.all" instance, which holds every media
	// engine of the GPU, shares it with an instance that needs one (any
	// profile but a "-me" one).
	ReasonMediaEngines Reason = "media-engines-exhausted"
	// ReasonComputeExhausted: the instances need more compute slices than
	// the GPU has.
	ReasonComputeExhausted Reason = "compute-exhausted"
	// ReasonMemoryExhausted: no assignment of allowed placements exists
	// without overlapping memory slots.
	ReasonMemoryExhausted Reason = "memory-exhausted"
)

// Error says why a layout cannot be placed.
type Error struct {
	// GPU is the catalog key of the GPU model.
	GPU string
	// Reason is the constraint the layout breaks.
	Reason Reason
	// Profile is the offending profile, when one is to blame.
	Profile string
	// Message is a full human sentence, e.g. `profile "1g.10gb" allows at
	// most 7 instances on A100-80GB, the layout asks for 8`.
	Message string
}

// Error returns the message.
func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Profile != "" {
		return "MIG layout on " + e.GPU + ": " + string(e.Reason) + " (" + e.Profile + ")"
	}
	return "MIG layout on " + e.GPU + ": " + string(e.Reason)
}
