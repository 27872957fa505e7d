package enginetest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/mig"
)

// Commits of the drift tests' history: C1 was applied, C2 is newer.
const (
	C1 = "1111111111111111111111111111111111111111"
	C2 = "2222222222222222222222222222222222222222"
)

// DriftSrc is a stack with a MIG pool (A100, layout of 7 x 1g.10gb, driver
// >= 535), a whole-GPU pool and two tenants; DriftConfig edits it.
const DriftSrc = `
gpuform { stack = "d" }
variable "secret_cpu" {
  type      = string
  default   = "8"
  sensitive = true
}
mig_layout "sevens" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 7 }
}
pool "a100" {
  gpu            = "A100-80GB"
  node_selector  = { "gpuform.dev/node-group" = "a100" }
  mig_layout     = mig_layout.sevens
  driver_version = ">= 535"
  overcommit     = 4
}
pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "h100" }
  overcommit    = 4
}
tenant "a" {
  quota "h100" {
    gpus = 2
  }
  admins  = ["group:a"]
  protect = false
}
tenant "b" {
  quota "h100" {
    gpus = 1
  }
  admins  = ["group:b"]
  protect = false
}
tenant "s" {
  cpu     = var.secret_cpu
  protect = false
}
`

// DriftConfig loads DriftSrc with replacements (old, new pairs, each
// replacing the first occurrence) and compiles it.
func DriftConfig(t testing.TB, replace ...string) (*config.Config, *engine.Desired) {
	t.Helper()
	src := DriftSrc
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(src, replace[i]) {
			t.Fatalf("DriftSrc has no %q", replace[i])
		}
		src = strings.Replace(src, replace[i], replace[i+1], 1)
	}
	cfg := LoadSource(t, src)
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, d
}

// Stamped is DriftConfig with every desired object stamped with commit.
func Stamped(t testing.TB, commit string, replace ...string) (*config.Config, *engine.Desired) {
	cfg, d := DriftConfig(t, replace...)
	d.StampCommit(commit)
	return cfg, d
}

// PoolNode is a node of a pool as gpuform and the GPU stack left it:
// GPU Feature Discovery labels, the pool's labels, MIG state success.
func PoolNode(t testing.TB, d *engine.Desired, pool, name, product string, gpus int, driver string) *unstructured.Unstructured {
	t.Helper()
	var np *engine.NodePool
	for _, p := range d.Pools {
		if p.Pool == pool {
			np = p
		}
	}
	n := GPUNode(name, pool, product, gpus, driver)
	labels := n.GetLabels()
	for k, v := range np.Labels {
		labels[k] = v
	}
	if np.MIGState == engine.LabelMIGState {
		labels[engine.LabelMIGState] = "success"
	}
	n.SetLabels(labels)
	return n
}

// DriftLive is the cluster after d was applied, with an A100 and an H100 node.
func DriftLive(t testing.TB, d *engine.Desired) *engine.Live {
	live := Applied(t, d)
	live.Nodes = []*unstructured.Unstructured{
		PoolNode(t, d, "a100", "a100-0", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
		PoolNode(t, d, "h100", "h100-0", "NVIDIA-H100-80GB-HBM3", 8, "550.54.15"),
	}
	return live
}

// CheckDrift plans d against live and classifies the drift against ref,
// with the configurations applied before and the hardware checks of cfg.
func CheckDrift(t testing.TB, cfg *config.Config, d *engine.Desired, live *engine.Live, ref string, applied ...drift.AppliedConfig) *drift.Report {
	t.Helper()
	p := MustDiff(t, d, live, engine.DiffOptions{})
	return drift.Classify(p, d, live, ref, drift.Options{Applied: applied, Config: cfg, Catalog: mig.Default()})
}

// Quota is the live ResourceQuota of namespace ns.
func Quota(live *engine.Live, ns string) *unstructured.Unstructured {
	return live.Objects[engine.Key{Kind: "ResourceQuota", Namespace: ns, Name: engine.QuotaName}]
}

// Items returns the report's items as "class kind ns/name" strings.
func Items(r *drift.Report) []string {
	var out []string
	for _, it := range r.Items {
		out = append(out, string(it.Class)+" "+it.Key().String())
	}
	return out
}

// WantItems fails the test unless the report's items are want, in order.
func WantItems(t testing.TB, r *drift.Report, want ...string) {
	t.Helper()
	if got := strings.Join(Items(r), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("drift items:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
