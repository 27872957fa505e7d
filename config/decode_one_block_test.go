package config_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// TestOneBlockOnly checks that a block that takes one nested block of a
// type refuses a second one, at the second.
func TestOneBlockOnly(t *testing.T) {
	const head = `
gpuform { stack = "s" }
`
	tests := []struct {
		name, src, detail string
		line              int
	}{
		{"time_slicing", `pool "p" {
  gpu = "L4"
  time_slicing { replicas = 2 }
  time_slicing { replicas = 3 }
}`, "A pool takes at most one time_slicing block.", 6},
		{"mps", `pool "p" {
  gpu = "L4"
  mps { replicas = 2 }
  mps { replicas = 3 }
}`, "A pool takes at most one mps block.", 6},
		{"pool alerts", `pool "p" {
  gpu = "L4"
  alerts { memory_above = 80 }
  alerts {}
}`, "A pool takes at most one alerts block.", 6},
		{"tenant alerts", `tenant "t" {
  alerts { quota_above = 70 }
  alerts {}
}`, "A tenant takes at most one alerts block.", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(head + tt.src)}, config.Options{})
			var found bool
			for _, d := range diags {
				if d.Detail == tt.detail {
					found = true
					if d.Subject == nil || d.Subject.Start.Line != tt.line {
						t.Errorf("%q at %v, want line %d", tt.detail, d.Subject, tt.line)
					}
				} else if strings.Contains(d.Detail, "at most one") {
					t.Errorf("unexpected diagnostic %q", d.Detail)
				}
			}
			if !found {
				t.Fatalf("no diagnostic %q among %v", tt.detail, diags)
			}
		})
	}
}
