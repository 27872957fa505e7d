package stack

import (
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
			restore := s.raiseGC()
			if during := gcPercent(); during != tt.want {
				t.Errorf("GOGC while raised = %d, want %d", during, tt.want)
			}
			restore()
			if after := gcPercent(); after != 100 {
				t.Errorf("GOGC after = %d, want 100", after)
			}
		})
	}
	// A Stack left at its zero options (a library's) leaves GOGC alone.
	debug.SetGCPercent(100)
	restore := New(nil, nil, Options{}).raiseGC()
	if during := gcPercent(); during != 100 {
		t.Errorf("GOGC without GCPercent = %d, want 100", during)
	}
	restore()
}
