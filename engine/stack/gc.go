package stack

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
)

// GCPercent is the garbage collector's GOGC the CLI sets while a
// configuration is loaded and validated, and through a run that only reads
// the cluster (plan, drift, preview) while it fits (see fit):
// Options.GCPercent. Loading is the most garbage-heavy part of a run (the
// HCL lexer's tokens; each block's syntax is freed as it is evaluated)
// while what it keeps is small; after it, compile and refresh build what
// the plan holds at its end, so a collection while they run finds little
// to free. Collecting half as often there saves CPU (a size-M plan
// collected 7 times instead of 8-10, its CPU 7% less). Plan, drift and
// preview collect the load's garbage while the configuration validates
// (collectLoad) and let compile fill the memory it freed (hold). Once the
// desired objects are compiled, fit turns the collector off where what is live
// fits well under the CLI's memory budget (internal/memlimit.Tune), which
// then paces it, and puts Go's default back in a large configuration
// (measured in docs/performance.md). An apply collects at Go's
// default after its load: its writes, not its CPU, set its time.
const GCPercent = 200

// raiseGC sets GOGC to Options.GCPercent until the returned gcRaise is
// restored (or fitted, see fit). Without it, or with GOGC or GOMEMLIMIT in
// the environment (Options.Load.Env), it changes nothing.
func (s *Stack) raiseGC() *gcRaise {
	if s.opts.GCPercent == 0 {
		return &gcRaise{}
	}
	for _, kv := range s.opts.Load.Env {
		if strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return &gcRaise{}
		}
	}
	return &gcRaise{prev: debug.SetGCPercent(s.opts.GCPercent), raised: true, percent: s.opts.GCPercent}
}

// gcRaise is a GOGC raised by raiseGC (to percent), and the setting before
// it.
type gcRaise struct {
	prev, percent int
	raised        bool
	// collected is closed once the collection collectLoad started ends;
	// nil when none was.
	collected chan struct{}
	// held is set once hold let the heap grow through compile.
	held bool
}

// restore puts the setting before raiseGC back, once.
func (g *gcRaise) restore() {
	if g.raised {
		debug.SetGCPercent(g.prev)
		g.raised = false
	}
}

// fitShare is the share of the soft memory limit that what is live once
// the desired objects are compiled may take for a run to go on collecting
// only near the limit (see fit).
const fitShare = 4

// pacedLimit is the largest soft memory limit under which fit turns the
// collector off: the CLI's budget outside a container (360 MiB) and the
// limit it sets in a container of 512 MiB (396 MiB) are under it. Above it
// (a larger container) the heap the collector would let grow before
// collecting is more than a run needs, and GCPercent stays.
const pacedLimit = 512 << 20

// fit decides, once the desired objects are compiled, how the rest of a
// run collects, from what the last collection found live then.
//
// Under a fitShare-th of a soft memory limit of at most pacedLimit, the
// collector is turned off and the limit alone paces it: the refresh adds
// about as much again as is live, so even then what is live stays under
// half the limit, and the heap is collected only when it nears the limit,
// each time freeing more than half of it. A size-M plan then collects
// nothing after its load (one or two collections fewer, about 70 ms of CPU
// in profiles; see docs/performance.md) and its resident memory stays
// where its load put it. Under a larger limit, or none (a library's Stack,
// GOMEMLIMIT=off), the raised GOGC stays.
//
// Over it, the setting before raiseGC is put back for the rest of the run:
// the heap GCPercent would let grow from what is live would meet the limit,
// where the collector runs often anyway and the process's resident memory
// rises past the limit (a size-L plan peaked at 487 MB at GOGC 200 against
// 427 MB at 100, five runs each).
//
// Where hold let the heap grow through compile, what is live is taken to
// be all the heap holds (liveNow).
func (g *gcRaise) fit() {
	if !g.raised {
		return
	}
	live, ok := g.liveNow()
	if !ok {
		return
	}
	limit := debug.SetMemoryLimit(-1)
	switch {
	case live > uint64(limit/fitShare):
		g.restore()
	case limit <= pacedLimit:
		debug.SetGCPercent(-1)
	default:
		debug.SetGCPercent(g.percent)
	}
	g.held = false
}

// liveNow is what is live for fit: the heap the last collection marked,
// or, once hold let the heap grow through compile, an upper bound of it:
// every object the heap holds, garbage not yet collected included (a
// collection while compiling marked only what was built by then).
func (g *gcRaise) liveNow() (uint64, bool) {
	if g.held {
		return readMetric("/memory/classes/heap/objects:bytes")
	}
	return readMetric("/gc/heap/live:bytes")
}

// readMetric reads one runtime/metrics counter of bytes.
func readMetric(name string) (uint64, bool) {
	sample := []metrics.Sample{{Name: name}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return sample[0].Value.Uint64(), true
}

// collectLoad starts a collection on another goroutine once a
// configuration has loaded, while it is validated: the load's garbage
// (the lexer's tokens, the syntax evaluated) is then most of the heap and
// what is live is only the configuration (about 10 of 100-120 MB at size
// M), so the collection is cheap, and it runs on the core validation
// leaves idle. Without it, that collection came once compiling had
// filled the heap, while the cluster's LISTs were arriving, on the cores
// the API server needs to send them (a local cluster's). It does nothing
// unless GOGC is raised (raiseGC).
func (g *gcRaise) collectLoad() {
	if g == nil || !g.raised || g.collected != nil {
		return
	}
	g.collected = make(chan struct{})
	go func() {
		defer close(g.collected)
		runtime.GC()
	}()
}

// hold waits for collectLoad's collection, then lets the heap grow
// through compile without collecting until it reaches a fitShare-th of a
// soft memory limit of at most pacedLimit (fit's threshold): compiling
// then builds the desired objects in the memory the load's garbage freed,
// without a collection while the LISTs arrive, where they fit (size M);
// a larger stack (size L) collects while it compiles as before. Where no
// such limit is set, or collectLoad started nothing, it changes nothing.
func (g *gcRaise) hold() {
	if g == nil || g.collected == nil || !g.raised {
		return
	}
	<-g.collected
	live, ok := readMetric("/gc/heap/live:bytes")
	limit := debug.SetMemoryLimit(-1)
	if !ok || live == 0 || limit > pacedLimit || live >= uint64(limit/fitShare) {
		return
	}
	room := uint64(limit/fitShare) - live
	g.held = true
	debug.SetGCPercent(max(g.percent, int(room*100/live)))
}
