package stack

import (
	"runtime/debug"
	"strings"
)

// LoadGCPercent is the garbage collector's GOGC the CLI sets while a
// configuration is loaded and validated (Options.LoadGCPercent). Loading
// is the most garbage-heavy part of a run (the HCL lexer's tokens; each
// block's syntax is freed as it is evaluated) while what it keeps is
// small, so collecting half as often there saves CPU; in a large
// configuration the CLI's memory budget (internal/memlimit.Tune) caps the
// heap that this lets grow (measured in docs/performance.md).
const LoadGCPercent = 200

// loadGC sets GOGC to Options.LoadGCPercent for the load and returns the
// function that puts the previous setting back. Without it, or with GOGC or
// GOMEMLIMIT in the environment (Options.Load.Env), it changes nothing.
func (s *Stack) loadGC() (restore func()) {
	if s.opts.LoadGCPercent == 0 {
		return func() {}
	}
	for _, kv := range s.opts.Load.Env {
		if strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return func() {}
		}
	}
	prev := debug.SetGCPercent(s.opts.LoadGCPercent)
	return func() { debug.SetGCPercent(prev) }
}
