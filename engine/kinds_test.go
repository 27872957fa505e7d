package engine_test

import (
	"testing"

	"github.com/gpuform/gpuform/engine"
)

func TestMIGResource(t *testing.T) {
	for in, want := range map[string]string{
		"1g.10gb":    "nvidia.com/mig-1g.10gb",
		"1g.10gb+me": "nvidia.com/mig-1g.10gb.me",
		"7g.80gb":    "nvidia.com/mig-7g.80gb",
	} {
		if got := engine.MIGResource(in); got != want {
			t.Errorf("MIGResource(%q) = %q, want %q", in, got, want)
		}
	}
}
