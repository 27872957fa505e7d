package usage

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

func TestShare(t *testing.T) {
	cat := mig.Default()
	gpu := func(k string) *mig.GPU { g, _ := cat.Lookup(k); return g }
	sliced := &config.Pool{TimeSlicing: &config.Sharing{Replicas: 4}}
	mps := &config.Pool{MPS: &config.Sharing{Replicas: 8, RenameByDefault: true}}
	for _, c := range []struct {
		name     string
		pool     *config.Pool
		gpu      *mig.GPU
		resource string
		want     float64
	}{
		{"whole GPU", &config.Pool{}, gpu("H100-80GB"), "nvidia.com/gpu", 1},
		{"quota spelling", &config.Pool{}, gpu("H100-80GB"), "requests.nvidia.com/gpu", 1},
		{"time-slicing replica", sliced, gpu("L4"), "nvidia.com/gpu", 0.25},
		{"MPS replica, renamed", mps, gpu("H100-80GB"), "nvidia_com_gpu_shared", 0.125},
		{"whole GPU on a pool that renames its replicas", mps, gpu("H100-80GB"), "nvidia.com/gpu", 0},
		{"renamed replica on a pool of whole GPUs", &config.Pool{}, gpu("H100-80GB"), "nvidia.com/gpu.shared", 0},
		{"A100 3g.40gb by compute slices", &config.Pool{}, gpu("A100-80GB"), "nvidia.com/mig-3g.40gb", 3.0 / 7},
		{"A100 1g.10gb, kube-state-metrics spelling", &config.Pool{}, gpu("A100-80GB"), "nvidia_com_mig_1g_10gb", 1.0 / 7},
		{"A100 1g.10gb+me", &config.Pool{}, gpu("A100-80GB"), "nvidia.com/mig-1g.10gb.me", 1.0 / 7},
		{"A30 1g.6gb of 4", &config.Pool{}, gpu("A30-24GB"), "nvidia.com/mig-1g.6gb", 0.25},
		{"profile of another GPU", &config.Pool{}, gpu("A30-24GB"), "nvidia.com/mig-3g.40gb", 0},
		{"no MIG", &config.Pool{}, gpu("L4"), "nvidia.com/mig-1g.10gb", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Share(c.pool, c.gpu, c.resource); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("Share(%s) = %v, want %v", c.resource, got, c.want)
			}
		})
	}
}

// fakeQuerier answers each query with fixed series.
type fakeQuerier map[string][]Series

func (f fakeQuerier) QueryRange(_ context.Context, q string, start, end time.Time, step time.Duration) ([]Series, error) {
	return f[q], nil
}

const usageConfig = `
gpuform { stack = "s" }
mig_layout "m" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}
pool "h100" {
  gpu                = "H100-80GB"
  price_per_gpu_hour = 4
}
pool "l4" {
  gpu = "L4"
  price_per_gpu_hour = 1
  time_slicing { replicas = 4 }
}
pool "a100" {
  gpu = "A100-80GB"
  mig_layout = mig_layout.m
  price_per_gpu_hour = 2.8
}
tenant "risk" {
  quota "h100" { gpus = 3 }
  quota "l4" { gpus = 1 }
  quota "a100" { slices = { "3g.40gb" = 2 } }
}
`

// steady is a series of value v at each of n one-minute steps from t0.
func steady(t0 time.Time, n int, v float64, labels ...string) Series {
	s := Series{Labels: map[string]string{}}
	for i := 0; i+1 < len(labels); i += 2 {
		s.Labels[labels[i]] = labels[i+1]
	}
	for k := range n {
		s.Points = append(s.Points, Point{T: t0.Add(time.Duration(k) * time.Minute), V: v})
	}
	return s
}

// TestComputeAttributes checks the attribution rules on one hour of
// samples: a node labelled for a pool puts a sample there; without node
// labels the one pool of the tenant's quotas holding the resource does
// (the MIG slice); a resource two of its pools hold goes to "-"; quota
// series split by the quota blocks, idle quota counted step by step; a MIG
// instance's engine activity counts its share of the GPU; other namespaces
// are unattributed.
func TestComputeAttributes(t *testing.T) {
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(usageConfig)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	w, err := NewWindow(t0, t0.Add(time.Hour), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	q := fakeQuerier{
		QueryNodes: {steady(t0, 60, 1, "node", "n1", "label_gpuform_dev_node_group", "h100")},
		QueryAllocated: {
			steady(t0, 60, 2, "namespace", "risk", "node", "n1", "resource", "nvidia_com_gpu"),
			steady(t0, 30, 1, "namespace", "risk", "node", "unlabelled", "resource", "nvidia_com_mig_3g_40gb"),
			steady(t0, 60, 1, "namespace", "risk", "node", "unlabelled", "resource", "nvidia_com_gpu"),
			steady(t0, 60, 5, "namespace", "other", "node", "n1", "resource", "nvidia_com_gpu"),
			steady(t0.Add(-time.Hour), 10, 9, "namespace", "risk", "node", "n1", "resource", "nvidia_com_gpu"),
		},
		QueryUsed: {steady(t0, 60, 1.5, "namespace", "risk", "Hostname", "n1")},
		// MIG instances: risk's 3g.40gb slice half busy for its half hour
		// (the profile places it in a100), and another namespace's.
		QueryUsedMIG: {
			steady(t0, 30, 0.5, "namespace", "risk", "Hostname", "unlabelled", "GPU_I_PROFILE", "3g.40gb"),
			steady(t0, 60, 1, "namespace", "other", "Hostname", "unlabelled", "GPU_I_PROFILE", "3g.40gb"),
		},
		QueryQuota: {
			steady(t0, 60, 4, "namespace", "risk", "resource", "requests.nvidia.com/gpu", "type", "hard"),
			steady(t0, 60, 3, "namespace", "risk", "resource", "requests.nvidia.com/gpu", "type", "used"),
			// A quota lowered below what is in use for half an hour: no
			// idle quota then, not a negative one.
			steady(t0, 60, 2, "namespace", "risk", "resource", "requests.nvidia.com/mig-3g.40gb", "type", "hard"),
			steady(t0, 30, 3, "namespace", "risk", "resource", "requests.nvidia.com/mig-3g.40gb", "type", "used"),
		},
	}
	rep, err := Compute(context.Background(), q, cfg, mig.Default(), w)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Row{
		// 2 GPUs on n1 for 1 h; the quota's 4 GPUs split 3:1 with l4.
		"h100": {Allocated: 2, Used: 1.5, Quota: 3, Idle: 0.75, Price: 4, Cost: 8},
		"l4":   {Quota: 0.25, Idle: 0.0625, Price: 1},
		// one 3g.40gb slice for half an hour: 3/7 × 0.5, used half of
		// that; quota 2 slices for 1 h, idle 2 slices for the half hour
		// nothing was over it.
		"a100": {Allocated: 1.5 / 7, Used: 0.75 / 7, Quota: 6.0 / 7, Idle: 3.0 / 7, Price: 2.8, Cost: 1.5 / 7 * 2.8},
		// nvidia.com/gpu on an unlabelled node: h100 or l4.
		"-": {Allocated: 1},
	}
	if len(rep.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(rep.Rows), len(want), rep.Rows)
	}
	for _, r := range rep.Rows {
		w := want[r.Pool]
		w.Tenant, w.Namespace, w.Pool = "risk", "risk", r.Pool
		for _, f := range [][2]float64{{r.Allocated, w.Allocated}, {r.Used, w.Used}, {r.Quota, w.Quota}, {r.Idle, w.Idle}, {r.Cost, w.Cost}, {r.Price, w.Price}} {
			if math.Abs(f[0]-f[1]) > 1e-9 {
				t.Errorf("pool %s: got %+v\nwant %+v", r.Pool, r, w)
				break
			}
		}
	}
	if math.Abs(rep.UnattributedAllocated-5) > 1e-9 || math.Abs(rep.UnattributedUsed-3.0/7) > 1e-9 {
		t.Errorf("unattributed: got %v allocated, %v used; want 5 and 3/7 (a busy 3g.40gb slice for 1 h)", rep.UnattributedAllocated, rep.UnattributedUsed)
	}
	if len(rep.Tenants) != 1 || len(rep.Times) != 60 || rep.Tenants[0].Allocated[0] != 2+3.0/7+1 || rep.Tenants[0].Allocated[59] != 3 {
		t.Errorf("timeline: %d tenants, %d times, %+v", len(rep.Tenants), len(rep.Times), rep.Tenants)
	}
}

func TestParseWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 7, 30, 0, time.UTC)
	for _, c := range []struct {
		window, from, to string
		step             time.Duration
		want             string // From/To, or the error
	}{
		{"", "", "", 5 * time.Minute, "2026-11-30T10:05:00Z 2026-12-01T10:05:00Z"},
		{"2h", "", "", time.Hour, "2026-12-01T08:00:00Z 2026-12-01T10:00:00Z"},
		{"", "2026-11-01T00:00:00Z", "2026-11-01T01:30:00Z", time.Hour, "2026-11-01T00:00:00Z 2026-11-01T01:00:00Z"},
		{"1h", "2026-11-01T00:00:00Z", "", time.Minute, "--from and --window both say where the window starts: give one"},
		{"yesterday", "", "", time.Minute, `--window "yesterday": want a positive duration such as 24h or 720h`},
		{"", "2026-11-01", "", time.Minute, `--from "2026-11-01": want an RFC 3339 time such as 2026-11-01T00:00:00Z`},
		{"30s", "", "", time.Minute, "the window from 2026-12-01T10:06:30Z to 2026-12-01T10:07:00Z holds no step of 1m0s"},
		{"720h", "", "", time.Second, "the window holds 2592000 steps of 1s, more than Prometheus's 11000: use a longer --step"},
	} {
		w, err := ParseWindow(c.window, c.from, c.to, c.step, now)
		got := w.From.Format(time.RFC3339) + " " + w.To.Format(time.RFC3339)
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("ParseWindow(%q, %q, %q, %s) = %s, want %s", c.window, c.from, c.to, c.step, got, c.want)
		}
	}
}
