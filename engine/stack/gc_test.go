package stack

import (
	"runtime/debug"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// loadGC raises GOGC for the load and restores it; the environment's GOGC
// or GOMEMLIMIT wins.
func TestLoadGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tt := range []struct {
		name string
		env  []string
		want int
	}{
		{"nothing set", []string{"HOME=/root"}, LoadGCPercent},
		{"GOGC set", []string{"GOGC=50"}, 100},
		{"GOMEMLIMIT set", []string{"GOMEMLIMIT=400MiB"}, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			s := New(nil, nil, Options{Load: config.Options{Env: tt.env}, LoadGCPercent: LoadGCPercent})
			restore := s.loadGC()
			if during := debug.SetGCPercent(-2); during != tt.want {
				t.Errorf("GOGC during the load = %d, want %d", during, tt.want)
			}
			debug.SetGCPercent(tt.want)
			restore()
			if after := debug.SetGCPercent(100); after != 100 {
				t.Errorf("GOGC after the load = %d, want 100", after)
			}
		})
	}
	// A Stack left at its zero options (a library's) leaves GOGC alone.
	debug.SetGCPercent(100)
	restore := New(nil, nil, Options{}).loadGC()
	if during := debug.SetGCPercent(100); during != 100 {
		t.Errorf("GOGC during the load without LoadGCPercent = %d, want 100", during)
	}
	restore()
}
