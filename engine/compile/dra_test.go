package compile_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// draStack has a DRA pool of A100s in MIG, a DRA pool of whole H100s and a
// device-plugin pool of L4s; tenant a has slices on the A100s, b whole
// H100s, c L4s and nothing on a DRA pool.
const draStack = `
gpuform {
  stack = "s"
}
mig_layout "small" {
  gpu    = "A100-40GB"
  slices = { "1g.5gb" = 2, "3g.20gb" = 1 }
}
pool "a100" {
  gpu        = "A100-40GB"
  mode       = "dra"
  mig_layout = mig_layout.small
}
pool "h100" {
  gpu  = "H100-80GB"
  mode = "dra"
}
pool "l4" {
  gpu = "L4"
}
tenant "a" {
  quota "a100" {
    slices = { "1g.5gb" = 2 }
  }
}
tenant "b" {
  quota "h100" {
    gpus = 1
  }
}
tenant "c" {
  quota "l4" {
    gpus = 2
  }
}
`

func compileDRA(t *testing.T, src string) *engine.Desired {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); len(diags) > 0 {
		t.Fatalf("validate: %s", diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func draObjects(d *engine.Desired, k engine.Kind) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range d.Objects {
		if o.Object.GroupVersionKind() == k.GroupVersionKind {
			out[o.Object.GetNamespace()+"/"+o.Object.GetName()] = o.Object
		}
	}
	return out
}

// TestDRADeviceClasses: each DRA pool is one DeviceClass per profile (or
// its whole GPUs), selecting by the attributes NVIDIA's driver publishes;
// a device-plugin pool has none.
func TestDRADeviceClasses(t *testing.T) {
	d := compileDRA(t, draStack)
	classes := draObjects(d, engine.KindDeviceClass)
	want := map[string]string{
		"/gpuform-s-a100-1g-5gb":  `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && device.attributes['gpu.nvidia.com'].productName in ['NVIDIA A100-SXM4-40GB', 'NVIDIA A100-PCIE-40GB', 'Mock NVIDIA A100-SXM4-40GB', 'NVIDIA A800-SXM4-40GB', 'NVIDIA A800 40GB PCIe'] && device.attributes['gpu.nvidia.com'].profile == '1g.5gb'`,
		"/gpuform-s-a100-3g-20gb": "",
		"/gpuform-s-h100-gpu":     "",
	}
	if got := slices.Sorted(maps.Keys(classes)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("DeviceClasses %v, want %v", got, slices.Sorted(maps.Keys(want)))
	}
	for name, expr := range want {
		sels, _, _ := unstructured.NestedSlice(classes[name].Object, "spec", "selectors")
		if len(sels) != 1 {
			t.Fatalf("%s: %d selectors, want 1", name, len(sels))
		}
		got, _, _ := unstructured.NestedString(sels[0].(map[string]any), "cel", "expression")
		if expr != "" && got != expr {
			t.Errorf("%s selects\n%s\nwant\n%s", name, got, expr)
		}
		if name == "/gpuform-s-h100-gpu" && (!strings.Contains(got, "type == 'gpu'") || !strings.Contains(got, "'NVIDIA H100 80GB HBM3'") || strings.Contains(got, "profile")) {
			t.Errorf("%s selects %s, want whole H100 GPUs", name, got)
		}
	}
}

// TestDRAQuotaNamesEveryClass: every tenant's ResourceQuota names the
// device quota of every DeviceClass of the stack, 0 where the tenant has
// none, and nvidia.com/gpu (the driver's own class maps it to DRA devices).
func TestDRAQuotaNamesEveryClass(t *testing.T) {
	d := compileDRA(t, draStack)
	quotas := draObjects(d, engine.KindResourceQuota)
	const dc = ".deviceclass.resource.k8s.io/devices"
	want := map[string]map[string]string{
		"a/gpuform": {"gpuform-s-a100-1g-5gb" + dc: "2", "gpuform-s-a100-3g-20gb" + dc: "0", "gpuform-s-h100-gpu" + dc: "0", "requests.nvidia.com/gpu": "0"},
		"b/gpuform": {"gpuform-s-a100-1g-5gb" + dc: "0", "gpuform-s-a100-3g-20gb" + dc: "0", "gpuform-s-h100-gpu" + dc: "1", "requests.nvidia.com/gpu": "0"},
		"c/gpuform": {"gpuform-s-a100-1g-5gb" + dc: "0", "gpuform-s-a100-3g-20gb" + dc: "0", "gpuform-s-h100-gpu" + dc: "0", "requests.nvidia.com/gpu": "2"},
	}
	for key, hard := range want {
		rq, ok := quotas[key]
		if !ok {
			t.Fatalf("no ResourceQuota %s among %v", key, slices.Sorted(maps.Keys(quotas)))
		}
		got, _, _ := unstructured.NestedStringMap(rq.Object, "spec", "hard")
		if !maps.Equal(got, hard) {
			t.Errorf("%s hard = %v, want %v", key, got, hard)
		}
	}
}

// TestDRAClaimsPolicy: a stack with a DRA pool refuses, in tenant
// namespaces, claims of a DeviceClass not the stack's; one without has no
// such policy.
func TestDRAClaimsPolicy(t *testing.T) {
	vaps := draObjects(compileDRA(t, draStack), engine.KindVAP)
	vap, ok := vaps["/gpuform-s-device-classes"]
	if !ok {
		t.Fatalf("no policy gpuform-s-device-classes among %v", slices.Sorted(maps.Keys(vaps)))
	}
	vars, _, _ := unstructured.NestedSlice(vap.Object, "spec", "variables")
	allowed, _ := vars[0].(map[string]any)["expression"].(string)
	if allowed != "['gpuform-s-a100-1g-5gb', 'gpuform-s-a100-3g-20gb', 'gpuform-s-h100-gpu']" {
		t.Errorf("allowed classes %s", allowed)
	}
	plain := strings.ReplaceAll(draStack, `mode       = "dra"`, "")
	plain = strings.ReplaceAll(plain, `mode = "dra"`, "")
	// A stack without DRA pools allows no class: NVIDIA's driver may run
	// beside the device plugin, with classes of its own.
	pvap, ok := draObjects(compileDRA(t, plain), engine.KindVAP)["/gpuform-s-device-classes"]
	if !ok {
		t.Fatal("a stack without DRA pools has no device-classes policy")
	}
	pvars, _, _ := unstructured.NestedSlice(pvap.Object, "spec", "variables")
	if allowed, _ := pvars[0].(map[string]any)["expression"].(string); allowed != "[]" {
		t.Errorf("a stack without DRA pools allows classes %s", allowed)
	}
}

// TestValidateDRAPools: what DRA cannot express, or gpuform does not
// compile for it yet, is one error at the line marked "# here".
func TestValidateDRAPools(t *testing.T) {
	const head = "gpuform {\n  stack = \"s\"\n  scheduler = \"SCHED\"\n}\n"
	tests := []struct{ name, sched, src, summary string }{
		{"two DRA pools of one model", "none", `
pool "p" {
  gpu  = "H100-80GB"
  mode = "dra"
  node_selector = { zone = "a" }
}
pool "q" {
  gpu  = "H100-80GB"
  mode = "dra" # here
  node_selector = { zone = "b" }
}`, "DRA pools not told apart"},
		{"a DRA and a device-plugin pool of one model", "none", `
pool "p" {
  gpu  = "H100-80GB"
  mode = "dra"
  node_selector = { zone = "a" }
}
pool "q" {
  gpu  = "H100-80GB"
  node_selector = { zone = "b" }
}`, ""},
		{"time-slicing on a DRA pool", "none", `
pool "p" {
  gpu  = "L4"
  mode = "dra"
  time_slicing { # here
    replicas = 2
  }
}`, "Sharing on a DRA pool"},
		{"DRA pool under Kueue", "kueue", `
pool "p" {
  gpu  = "H100-80GB"
  mode = "dra"
}`, ""},
		{"DRA pool under Volcano", "volcano", `
pool "p" {
  gpu  = "H100-80GB"
  mode = "dra" # here
}`, "DRA pool under a queueing scheduler"},
		{"more DeviceClasses than Kueue maps", "kueue", `
pool "p" {
  gpu        = "A100-80GB"
  mode       = "dra"
  mig_layout = mig_layout.all
}
pool "q" {
  gpu        = "H100-80GB"
  mode       = "dra"
  mig_layout = mig_layout.h
}
pool "r" {
  gpu  = "L4"
  mode = "dra" # here
}
mig_layout "all" {
  gpu = "A100-80GB"
  device {
    indexes = [0]
    slices  = { "1g.10gb" = 7 }
  }
  device {
    indexes = [1]
    slices  = { "1g.20gb" = 4 }
  }
  device {
    indexes = [2]
    slices  = { "2g.20gb" = 3 }
  }
  device {
    indexes = [3]
    slices  = { "3g.40gb" = 2 }
  }
  device {
    indexes = [4]
    slices  = { "4g.40gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "7g.80gb" = 1 }
  }
  device {
    indexes = [6]
    enabled = false
  }
  device {
    indexes = [7]
    slices  = { "1g.10gb+me" = 1 }
  }
}
mig_layout "h" {
  gpu = "H100-80GB"
  device {
    indexes = [0]
    slices  = { "1g.10gb" = 7 }
  }
  device {
    indexes = [1]
    slices  = { "1g.20gb" = 4 }
  }
  device {
    indexes = [2]
    slices  = { "2g.20gb" = 3 }
  }
  device {
    indexes = [3]
    slices  = { "3g.40gb" = 2 }
  }
  device {
    indexes = [4]
    slices  = { "4g.40gb" = 1 }
  }
  device {
    indexes = [5]
    slices  = { "7g.80gb" = 1 }
  }
  device {
    indexes = [6]
    enabled = false
  }
  device {
    indexes = [7]
    slices  = { "1g.10gb+me" = 1 }
  }
}`, "Too many DeviceClasses for Kueue"},
		{"model on a DRA pool", "none", `
pool "p" {
  gpu  = "H100-80GB"
  mode = "dra"
}
tenant "t" {
  quota "p" {
    gpus = 1
  }
}
model "m" {
  tenant      = tenant.t
  pool        = pool.p # here
  format      = "onnx"
  storage_uri = "s3://m"
}`, "Model on a DRA pool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(head, "SCHED", tt.sched, 1) + tt.src
			validateAtHere(t, src, tt.summary, false)
		})
	}
}
