package usage

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestComputeDropsHostileSamples: samples that are NaN, infinite, negative
// or beyond MaxSampleValue (1e308 twice is +Inf) are left out and counted
// in Dropped; every figure of the report is finite and not negative, and
// the report encodes as JSON. Before, 1e308 samples summed to +Inf (a CSV
// cell "+Inf", a JSON encoding error) and negative ones made negative
// GPU-hours and costs, silently.
func TestComputeDropsHostileSamples(t *testing.T) {
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(usageConfig)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	w, err := NewWindow(t0, t0.Add(time.Hour), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	hostile := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -5, 1e308, 1e308}
	series := func(labels ...string) Series {
		s := steady(t0, 10, 1, labels...)
		for i, v := range hostile {
			s.Points = append(s.Points, Point{T: t0.Add(time.Duration(10+i) * time.Minute), V: v})
		}
		return s
	}
	q := fakeQuerier{
		QueryNodes:     {steady(t0, 60, 1, "node", "n1", "label_gpuform_dev_node_group", "h100")},
		QueryAllocated: {series("namespace", "risk", "node", "n1", "resource", "nvidia_com_gpu"), series("namespace", "other", "node", "n1", "resource", "nvidia_com_gpu")},
		QueryUsed:      {series("namespace", "risk", "Hostname", "n1")},
		QueryQuota:     {series("namespace", "risk", "resource", "requests.nvidia.com/gpu", "type", "hard"), series("namespace", "risk", "resource", "requests.nvidia.com/gpu", "type", "used")},
	}
	rep, err := Compute(context.Background(), q, cfg, mig.Default(), w)
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 * len(hostile); rep.Dropped != want {
		t.Errorf("Dropped = %d, want %d", rep.Dropped, want)
	}
	for _, r := range rep.Rows {
		for _, v := range []float64{r.Allocated, r.Used, r.Quota, r.Idle, r.Cost} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("row %+v holds %v", r, v)
			}
		}
	}
	for _, v := range []float64{rep.UnattributedAllocated, rep.UnattributedUsed} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("unattributed %v", v)
		}
	}
	if _, err := json.Marshal(rep.Rows); err != nil {
		t.Errorf("the rows do not encode: %v", err)
	}
	for _, r := range rep.Rows {
		if r.Pool == "h100" && math.Abs(r.Allocated-10.0/60) > 1e-9 {
			t.Errorf("h100 allocated %v, want the 10 good samples: 1/6 GPU-hour", r.Allocated)
		}
	}
}
