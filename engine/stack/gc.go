package stack

import (
	"runtime/debug"
	"strings"
)

// GCPercent is the garbage collector's GOGC the CLI sets while a
// configuration is loaded and validated, and through the whole of a run
// that only reads the cluster (plan, drift, preview): Options.GCPercent.
// Loading is the most garbage-heavy part of a run (the HCL lexer's tokens;
// each block's syntax is freed as it is evaluated) while what it keeps is
// small; after it, compile and refresh build what the plan holds at its
// end, so a collection while they run finds little to free. Collecting
// half as often there saves CPU (a size-M plan's collector ran four times
// after the load instead of eight); in a large configuration the CLI's
// memory budget (internal/memlimit.Tune) caps the heap that this lets grow
// (measured in docs/performance.md). An apply collects at Go's default
// after its load: its writes, not its CPU, set its time.
const GCPercent = 200

// raiseGC sets GOGC to Options.GCPercent and returns the function that
// puts the previous setting back. Without it, or with GOGC or GOMEMLIMIT
// in the environment (Options.Load.Env), it changes nothing.
func (s *Stack) raiseGC() (restore func()) {
	if s.opts.GCPercent == 0 {
		return func() {}
	}
	for _, kv := range s.opts.Load.Env {
		if strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return func() {}
		}
	}
	prev := debug.SetGCPercent(s.opts.GCPercent)
	return func() { debug.SetGCPercent(prev) }
}
