package engine_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// TestModeSwitchWarnings: a pool's move between the device plugin and DRA
// is one warning at the pool saying what the move takes and naming the
// pods on its nodes that hold GPUs; those pods are not worded as a
// re-partition (no node change of the plan waits for a new layout); and
// apply refuses them without --allow-disruption.
func TestModeSwitchWarnings(t *testing.T) {
	pool := &config.Pool{Meta: config.Meta{Name: "h100", Address: "pool.h100"}}
	p := &engine.Plan{Disruption: map[string][]string{"h100-0": {"team/train-0"}}}
	switches := []capacity.ModeSwitch{{Pool: pool, ToDRA: true, Nodes: []string{"h100-0", "h100-1"}}}
	if w := engine.DisruptionWarnings(p); len(w) != 0 {
		t.Errorf("a node the plan does not re-partition worded as one: %v", w)
	}
	w := engine.ModeSwitchWarnings(switches, p.Disruption)
	if len(w) != 1 {
		t.Fatalf("warnings %v, want one for the pool", w)
	}
	for _, want := range []string{"Pool h100 moves from the device plugin to DRA", "h100-0, h100-1", "stop the device plugin", "h100-0: team/train-0"} {
		if !strings.Contains(w[0].Summary, want) {
			t.Errorf("warning %q lacks %q", w[0].Summary, want)
		}
	}
	back := engine.ModeSwitchWarnings([]capacity.ModeSwitch{{Pool: pool, Nodes: []string{"h100-1"}}}, p.Disruption)
	if len(back) != 1 || !strings.Contains(back[0].Summary, "moves from DRA to the device plugin") || strings.Contains(back[0].Summary, "team/train-0") {
		t.Errorf("the move back: %v", back)
	}
	reasons := engine.Unsafe(p, engine.SafetyOptions{MaxDeletes: 10})
	if len(reasons) != 1 || !strings.Contains(reasons[0], "moves between the device plugin and DRA, h100-0") {
		t.Errorf("apply's refusal %q", reasons)
	}
	if r := engine.Unsafe(p, engine.SafetyOptions{MaxDeletes: 10, AllowDisruption: true}); len(r) != 0 {
		t.Errorf("refused with --allow-disruption: %q", r)
	}
}
