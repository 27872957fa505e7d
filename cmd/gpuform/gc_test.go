package main

import (
	"runtime/debug"
	"testing"
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
		{"nothing set", []string{"HOME=/root"}, loadGCPercent},
		{"GOGC set", []string{"GOGC=50"}, 100},
		{"GOMEMLIMIT set", []string{"GOMEMLIMIT=400MiB"}, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			g := &globals{env: tt.env}
			restore := g.loadGC()
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
}
