package capacity_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
)

// capacityConfig is a MIG pool of 1g.10gb x 7 per A100-80GB plus a
// time-sliced H100 pool, with quotas given in the test.
func capacityConfig(t *testing.T, migQuota, gpuQuota int, overcommit, driver string) *config.Config {
	t.Helper()
	src := `
gpuform { stack = "cap" }
mig_layout "sevens" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 7 }
}
pool "a100" {
  gpu            = "A100-80GB"
  node_selector  = { "gpuform.dev/node-group" = "a100" }
  mig_layout     = mig_layout.sevens
  overcommit     = ` + overcommit + `
  driver_version = "` + driver + `"
}
pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "h100" }
  time_slicing {
    replicas = 4
  }
}
tenant "a" {
  quota "a100" {
    slices = { "1g.10gb" = ` + strconv.Itoa(migQuota) + ` }
  }
  quota "h100" {
    gpus = ` + strconv.Itoa(gpuQuota) + `
  }
}
model "m" {
  tenant      = tenant.a
  pool        = pool.a100
  slice       = "1g.10gb"
  format      = "onnx"
  storage_uri = "s3://m"
  replicas    = { min = 3, max = 5 }
}
`
	return enginetest.LoadSource(t, src)
}

func TestCapacity(t *testing.T) {
	// Two A100 nodes of 8 GPUs with 7 x 1g.10gb each: 2 x 8 x 7 = 112 slices.
	// One H100 node of 4 GPUs with 4 time-slicing replicas: 1 x 4 x 4 = 16.
	nodes := []*unstructured.Unstructured{
		enginetest.GPUNode("a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
		enginetest.GPUNode("a100-1", "a100", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
		enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 4, "550.54.15"),
	}
	tests := []struct {
		name       string
		migQuota   int
		gpuQuota   int
		overcommit string
		driver     string
		wantErr    string // empty: ok
		wantRows   []capacity.Row
	}{
		{name: "exactly at capacity", migQuota: 99, gpuQuota: 16, overcommit: "1.0", driver: ">= 535",
			wantRows: []capacity.Row{
				{Pool: "a100", Resource: "nvidia.com/mig-1g.10gb", Total: 112, Quota: 99, Requested: 3, Free: 13, Limit: 112, TotalBefore: 0},
				{Pool: "h100", Resource: "nvidia.com/gpu", Total: 16, Quota: 16, Requested: 0, Free: 0, Limit: 16, TotalBefore: 16},
			}},
		{name: "over quota", migQuota: 99, gpuQuota: 17, overcommit: "1.0", driver: ">= 535",
			wantErr: "claim 17 of nvidia.com/gpu, but the pool has 16 (1 node, 4 GPUs x 4 time-slicing replicas)"},
		{name: "overcommit 1.3", migQuota: 99, gpuQuota: 16, overcommit: "1.3", driver: ">= 535",
			// 112 x 1.3 = 145.6 -> 145 allowed; 99 fits.
			wantRows: []capacity.Row{
				{Pool: "a100", Resource: "nvidia.com/mig-1g.10gb", Total: 112, Quota: 99, Requested: 3, Free: 13, Limit: 145, TotalBefore: 0},
				{Pool: "h100", Resource: "nvidia.com/gpu", Total: 16, Quota: 16, Requested: 0, Free: 0, Limit: 16, TotalBefore: 16},
			}},
		{name: "driver too old", migQuota: 1, gpuQuota: 1, overcommit: "1.0", driver: ">= 560",
			wantErr: "needs driver >= 560, but a100-0 (550.54.15), a100-1 (550.54.15)"},
		// An exact pin is neither a minimum nor a maximum: a newer driver is
		// not the pinned one (it said "Driver too old" before), an older one
		// neither, and the pinned one passes.
		{name: "exact pin on a newer driver", migQuota: 1, gpuQuota: 1, overcommit: "1.0", driver: "550.54.14",
			wantErr: "Pool a100 pins driver 550.54.14, but a100-0 (550.54.15), a100-1 (550.54.15)"},
		{name: "exact pin on an older driver", migQuota: 1, gpuQuota: 1, overcommit: "1.0", driver: "= 560.35.03",
			wantErr: "Pool a100 pins driver = 560.35.03, but a100-0 (550.54.15), a100-1 (550.54.15)"},
		{name: "exact pin met", migQuota: 99, gpuQuota: 16, overcommit: "1.0", driver: "550.54.15",
			wantRows: []capacity.Row{
				{Pool: "a100", Resource: "nvidia.com/mig-1g.10gb", Total: 112, Quota: 99, Requested: 3, Free: 13, Limit: 112, TotalBefore: 0},
				{Pool: "h100", Resource: "nvidia.com/gpu", Total: 16, Quota: 16, Requested: 0, Free: 0, Limit: 16, TotalBefore: 16},
			}},
		{name: "driver too new", migQuota: 1, gpuQuota: 1, overcommit: "1.0", driver: "< 550",
			wantErr: "Pool a100 needs driver < 550, but a100-0 (550.54.15), a100-1 (550.54.15)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := capacityConfig(t, tt.migQuota, tt.gpuQuota, tt.overcommit, tt.driver)
			c, diags := capacity.CheckFrom(cfg, nodes, capacity.DRAInventory{}, nil, mig.Default())
			if tt.wantErr != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tt.wantErr, diags)
				}
				var buf bytes.Buffer
				if err := (&config.DiagnosticWriter{Files: cfg.Files}).Write(&buf, diags); err != nil {
					t.Fatal(err)
				}
				golden(t, strings.ReplaceAll(tt.name, " ", "-")+".txt", buf.String())
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if len(c.Rows) != len(tt.wantRows) {
				t.Fatalf("rows = %+v", c.Rows)
			}
			for i, r := range c.Rows {
				if r != tt.wantRows[i] {
					t.Errorf("row %d = %+v, want %+v", i, r, tt.wantRows[i])
				}
			}
			var buf bytes.Buffer
			p := &engine.Plan{Stack: "cap", Capacity: c}
			if err := render.Text(&buf, p, render.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			golden(t, strings.ReplaceAll(tt.name, " ", "-")+".txt", buf.String())
		})
	}
}

func TestCapacityNodeChecks(t *testing.T) {
	cfg := capacityConfig(t, 1, 1, "1.0", ">= 535")
	_, diags := capacity.CheckFrom(cfg, []*unstructured.Unstructured{enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 4, "")}, capacity.DRAInventory{}, nil, mig.Default())
	if !strings.Contains(diags.Error(), "Pool a100 selects nodes labelled gpuform.dev/node-group=a100, and no node") {
		t.Errorf("a pool without nodes: %v", diags)
	}
	wrong := []*unstructured.Unstructured{
		enginetest.GPUNode("a100-0", "a100", "NVIDIA-H100-80GB-HBM3", 8, ""),
		enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 4, ""),
	}
	_, diags = capacity.CheckFrom(cfg, wrong, capacity.DRAInventory{}, nil, mig.Default())
	if !strings.Contains(diags.Error(), "Pool a100 is for A100-80GB GPUs, but it selects a100-0 (H100-80GB)") {
		t.Errorf("nodes with other GPUs: %v", diags)
	}
}

func TestInventoryAnnotationIsChecked(t *testing.T) {
	n := enginetest.GPUNode("a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 8, "")
	ann := map[string]string{agentv1.AnnotInventory: `{"version":1,"driver_version":"550.1","gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","memory_mib":81559,"mig_enabled":false}]}`}
	n.SetAnnotations(ann)
	inv := capacity.InventoryOf(n, mig.Default())
	if inv.Source != "gfd" || inv.Model != "A100-80GB" || !strings.Contains(inv.Warning, "trusting GPU Feature Discovery") {
		t.Errorf("an annotation that lies about the GPU model was trusted: %+v", inv)
	}
	for _, bad := range []string{`{`, `{"version":2,"gpus":[]}`, `{"version":1,"gpus":[{"index":0},{"index":0}]}`, strings.Repeat("x", 70000),
		`{"version":1,"gpus":[{"index":0,"instances":[{"profile":"7g.80gb","start":-1,"size":8}]}]}`,
		`{"version":1,"gpus":[{"index":0,"instances":[{"profile":"3g.40gb","start":0,"size":4},{"profile":"3g.40gb","start":4,"size":4},{"profile":"1g.10gb","start":7,"size":1}]}]}`,
	} {
		if _, err := agentv1.ParseInventory(bad); err == nil {
			t.Errorf("ParseAgentInventory accepted %.40q", bad)
		}
	}
}

// TestQuotaBeforeIsTheAppliedQuota: the capacity table's quota "now" is
// the quota the caller read from the applied objects (compile.AppliedQuota).
func TestQuotaBeforeIsTheAppliedQuota(t *testing.T) {
	cfg := capacityConfig(t, 10, 4, "1.0", ">= 535")
	nodes := []*unstructured.Unstructured{
		enginetest.GPUNode("a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
		enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 4, "550.54.15"),
	}
	now := capacity.Counts{"nvidia.com/mig-1g.10gb": 7, "nvidia.com/gpu": 3}
	c, diags := capacity.CheckFrom(cfg, nodes, capacity.DRAInventory{}, now, mig.Default())
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(c.Rows) == 0 {
		t.Fatal("no capacity rows")
	}
	for _, r := range c.Rows {
		if int64(r.QuotaBefore) != now[r.Resource] {
			t.Errorf("%s quota now %d, want %d", r.Resource, r.QuotaBefore, now[r.Resource])
		}
	}
}
