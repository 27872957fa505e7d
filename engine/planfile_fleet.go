package engine

// FleetBinding ties one member's saved plan to the fleet plan it was made
// in. Every member's plan carries the whole binding under its own checksum
// and signature, so a fleet plan file whose members were dropped, added,
// swapped for another fleet plan's or renamed is refused even though each
// member's plan is valid on its own.
type FleetBinding struct {
	// ID is random, the same in every member's plan of one fleet plan.
	ID string `json:"id"`
	// Member is the cluster this plan is for.
	Member string `json:"member"`
	// Fleet is every member of the fleet when the plan was made, in fleet
	// order (planned or not: --cluster plans some).
	Fleet []string `json:"fleet"`
	// Planned are the members the fleet plan holds a plan for, in fleet
	// order, with the hash of the configuration each was planned from.
	Planned []FleetMemberHash `json:"planned"`
}

// FleetMemberHash is one planned member of a fleet plan and the hash of
// its configuration (config.Config.Hash).
type FleetMemberHash struct {
	Name       string `json:"name"`
	ConfigHash string `json:"config_hash"`
}
