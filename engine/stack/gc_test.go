package stack

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// gcPercent returns the current GOGC without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// raiseGC raises GOGC and restores it; the environment's GOGC or
// GOMEMLIMIT wins.
func TestRaiseGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tt := range []struct {
		name string
		env  []string
		want int
	}{
		{"nothing set", []string{"HOME=/root"}, GCPercent},
		{"GOGC set", []string{"GOGC=50"}, 100},
		{"GOMEMLIMIT set", []string{"GOMEMLIMIT=400MiB"}, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			s := New(nil, nil, Options{Load: config.Options{Env: tt.env}, GCPercent: GCPercent})
			g := s.raiseGC()
			if during := gcPercent(); during != tt.want {
				t.Errorf("GOGC while raised = %d, want %d", during, tt.want)
			}
			g.restore()
			if after := gcPercent(); after != 100 {
				t.Errorf("GOGC after = %d, want 100", after)
			}
		})
	}
	// A Stack left at its zero options (a library's) leaves GOGC alone.
	debug.SetGCPercent(100)
	g := New(nil, nil, Options{}).raiseGC()
	if during := gcPercent(); during != 100 {
		t.Errorf("GOGC without GCPercent = %d, want 100", during)
	}
	g.restore()
}

// fit puts GOGC back when what is live is more than a fitShare-th of the
// soft memory limit, turns the collector off below that where the limit is
// small enough to pace it (pacedLimit), and keeps GOGC raised under a
// larger limit or none.
func TestFitGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	held := make([]byte, 32<<20)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC() // what is live now holds held
	for _, tt := range []struct {
		name  string
		limit int64
		want  int
	}{
		{"far under a limit that paces it", pacedLimit, -1},
		{"over a fitShare-th of it", fitShare * 16 << 20, 100},
		{"under a limit too large to pace it", 1 << 40, GCPercent},
		{"no limit", math.MaxInt64, GCPercent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(tt.limit)
			fitThenRestore(t, New(nil, nil, Options{GCPercent: GCPercent}).raiseGC(), tt.want)
		})
	}
	runtime.KeepAlive(held)
}

// collectLoad collects while a configuration is validated; hold then
// lets the heap grow to a fitShare-th of a limit that paces it before the
// next collection, and fit counts all the heap holds as live: a run that
// compiled little keeps the collector off, one that compiled more than a
// fitShare-th of the limit (collecting as it compiled) gets GOGC back, and
// under a limit too large to pace it GOGC stays raised throughout.
func TestHoldGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tt := range []struct {
		name      string
		limit     int64
		compiled  int  // bytes allocated and kept between hold and fit
		held      bool // GOGC above GCPercent while compiling
		wantAfter int
	}{
		{"compiled little under a limit that paces it", pacedLimit, 1 << 20, true, -1},
		{"compiled over a fitShare-th of the limit", fitShare * 16 << 20, 32 << 20, true, 100},
		{"under a limit too large to pace it", 1 << 40, 1 << 20, false, GCPercent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(tt.limit)
			g := New(nil, nil, Options{GCPercent: GCPercent}).raiseGC()
			before := collections()
			g.collectLoad()
			g.hold()
			if got := collections(); got <= before {
				t.Errorf("collections after hold = %d, want more than %d", got, before)
			}
			if got := gcPercent(); (got > GCPercent) != tt.held {
				t.Errorf("GOGC while compiling = %d, want above %d: %v", got, GCPercent, tt.held)
			}
			compiled := make([]byte, tt.compiled)
			for i := range compiled {
				compiled[i] = byte(i)
			}
			fitThenRestore(t, g, tt.wantAfter)
			runtime.KeepAlive(compiled)
		})
	}
	// Without a raised GOGC (a library's Stack, GOGC set) neither
	// collects nor changes GOGC.
	debug.SetGCPercent(100)
	g := New(nil, nil, Options{}).raiseGC()
	before := collections()
	g.collectLoad()
	g.hold()
	if got := gcPercent(); got != 100 {
		t.Errorf("GOGC after hold without a raise = %d, want 100", got)
	}
	if got := collections(); got != before {
		t.Errorf("collections without a raise = %d, want %d", got, before)
	}
}

// Once held, what fit takes as live counts every byte allocated since.
func TestHeldLiveCountsAllocations(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(pacedLimit))
	g := New(nil, nil, Options{GCPercent: GCPercent}).raiseGC()
	defer g.restore()
	g.collectLoad()
	g.hold()
	if !g.held {
		t.Fatal("hold did not hold under a limit that paces the collector")
	}
	start, _ := g.liveNow()
	kept := make([]byte, 8<<20)
	for i := range kept {
		kept[i] = byte(i)
	}
	now, _ := g.liveNow()
	if now < start+8<<20 {
		t.Errorf("live after allocating 8 MiB = %d, want at least %d", now, start+8<<20)
	}
	runtime.KeepAlive(kept)
}

// fitThenRestore fits g and checks that GOGC is then want, and that
// restoring g puts back the 100 set before it was raised.
func fitThenRestore(t *testing.T, g *gcRaise, want int) {
	t.Helper()
	g.fit()
	if got := gcPercent(); got != want {
		t.Errorf("GOGC after fit = %d, want %d", got, want)
	}
	g.restore()
	if got := gcPercent(); got != 100 {
		t.Errorf("GOGC after restore = %d, want 100", got)
	}
}

// collections is how many collections this process has completed.
func collections() uint64 {
	var st debug.GCStats
	debug.ReadGCStats(&st)
	return uint64(st.NumGC)
}
