package main

import (
	"runtime/debug"
	"strings"
)

// loadGCPercent is the garbage collector's GOGC while a configuration is
// loaded and validated. Loading is the most garbage-heavy part of a run (the
// HCL lexer's tokens; the syntax tree is dropped after compiling) while
// what it keeps is small, so collecting half as often there saves CPU
// without raising the run's peak memory, which comes later, when the
// cluster's objects are held beside the desired ones (measured in
// docs/performance.md).
const loadGCPercent = 200

// loadGC sets GOGC to loadGCPercent for the load and returns the function
// that puts the previous setting back. GOGC or GOMEMLIMIT in the
// environment always win: then it changes nothing.
func (g *globals) loadGC() (restore func()) {
	for _, kv := range g.env {
		if strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return func() {}
		}
	}
	prev := debug.SetGCPercent(loadGCPercent)
	return func() { debug.SetGCPercent(prev) }
}
