package config_test

import (
	"slices"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// TestBlocks checks that Blocks finds every instance of top-level and
// nested block types, in source order, and refuses a path the model has
// no blocks at.
func TestBlocks(t *testing.T) {
	src := `
gpuform { stack = "s" }
pool "a" {
  gpu = "L4"
  time_slicing { replicas = 2 }
}
pool "b" { gpu = "L4" }
pool "c" {
  gpu = "L4"
  mps { replicas = 4 }
}
tenant "x" {
  quota "a" { gpus = 1 }
  quota "b" { gpus = 2 }
}
tenant "y" {
  quota "c" { gpus = 1 }
}
`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		path string
		ok   bool
		want []string // the instances' addresses
	}{
		{"gpuform", true, []string{"gpuform"}},
		{"pool", true, []string{"pool.a", "pool.b", "pool.c"}},
		{"pool.time_slicing", true, []string{"pool.a.time_slicing"}},
		{"pool.mps", true, []string{"pool.c.mps"}},
		{"tenant.quota", true, []string{`tenant.x.quota["a"]`, `tenant.x.quota["b"]`, `tenant.y.quota["c"]`}},
		{"model", true, nil},
		{"tenant.cohort", false, nil}, // an argument, not a block
		{"nothing", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			metas, ok := cfg.Blocks(tt.path)
			if ok != tt.ok {
				t.Fatalf("Blocks(%q) ok = %v, want %v", tt.path, ok, tt.ok)
			}
			var got []string
			for _, m := range metas {
				got = append(got, m.Address)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Blocks(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
	if metas, ok := (*config.Config)(nil).Blocks("pool"); !ok || len(metas) != 0 {
		t.Errorf("Blocks of a nil configuration = %v, %v; want none, true", metas, ok)
	}
}
