package compile_test

import (
	"encoding/json"
	"fmt"
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
` + everyProfile("all", "A100-80GB") + everyProfile("h", "H100-80GB"), "Too many DeviceClasses for Kueue"},
		// A model on a DRA pool is valid and compiles (a ResourceClaimTemplate,
		// TestDRAModelClaimTemplate); its checks are those of every model.
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
  pool        = pool.p
  gpus        = 1
  format      = "onnx"
  storage_uri = "s3://m"
}`, ""},
		{"whole GPUs on a DRA MIG pool", "none", `
mig_layout "l" {
  gpu    = "A100-40GB"
  slices = { "1g.5gb" = 7 }
}
pool "p" {
  gpu        = "A100-40GB"
  mode       = "dra"
  mig_layout = mig_layout.l
}
tenant "t" {
  quota "p" {
    slices = { "1g.5gb" = 1 }
  }
}
model "m" {
  tenant      = tenant.t
  pool        = pool.p
  gpus        = 1 # here
  format      = "onnx"
  storage_uri = "s3://m"
}`, "Whole GPUs on a MIG pool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(head, "SCHED", tt.sched, 1) + tt.src
			validateAtHere(t, src, tt.summary, tt.summary == "")
		})
	}
}

// draModels are models on each pool of draStack: a slice of the A100s, an
// H100 and an L4 (a device-plugin pool).
const draModels = `
model "vision" {
  tenant      = tenant.a
  pool        = pool.a100
  slice       = "1g.5gb"
  format      = "onnx"
  storage_uri = "s3://vision"
}
model "chat" {
  tenant      = tenant.b
  pool        = pool.h100
  gpus        = 1
  format      = "huggingface"
  storage_uri = "s3://chat"
}
model "ocr" {
  tenant      = tenant.c
  pool        = pool.l4
  gpus        = 2
  format      = "onnx"
  storage_uri = "s3://ocr"
}
`

// TestDRAModelClaimTemplate: a model on a DRA pool gets a
// ResourceClaimTemplate in its tenant's namespace asking for its slice or
// GPUs of the pool's DeviceClass, named by what it asks for (a template's
// spec is immutable), and its InferenceService's predictor claims from it
// (pod resourceClaims, the model container's resources.claims) instead of
// asking for an extended resource, and waits for it; a model on a
// device-plugin pool is unchanged.
func TestDRAModelClaimTemplate(t *testing.T) {
	d := compileDRA(t, draStack+draModels)
	tmplKind := engine.BuiltinKind("resource.k8s.io", "ResourceClaimTemplate")
	templates := draObjects(d, tmplKind)
	isvcs := draObjects(d, engine.KindInferenceService)
	for _, tc := range []struct {
		key, tmpl, class string
		count            int64
	}{
		{"a/vision", "a/vision-a100-1g-5gb-1", "gpuform-s-a100-1g-5gb", 1},
		{"b/chat", "b/chat-h100-gpu-1", "gpuform-s-h100-gpu", 1},
		{"c/ocr", "", "", 0},
	} {
		tmpl, ok := templates[tc.tmpl]
		isvc := isvcs[tc.key]
		pred, _, _ := unstructured.NestedMap(isvc.Object, "spec", "predictor")
		res, _, _ := unstructured.NestedMap(pred, "model", "resources")
		if tc.class == "" {
			if len(templates) != 2 {
				t.Errorf("%s: a model on a device-plugin pool has a ResourceClaimTemplate", tc.key)
			}
			if _, ok := pred["resourceClaims"]; ok || res["limits"] == nil {
				t.Errorf("%s: predictor %v, want the extended resource and no claim", tc.key, pred)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s: no ResourceClaimTemplate %s among %v", tc.key, tc.tmpl, slices.Sorted(maps.Keys(templates)))
		}
		reqs, _, _ := unstructured.NestedSlice(tmpl.Object, "spec", "spec", "devices", "requests")
		if len(reqs) != 1 {
			t.Fatalf("%s: template requests %v, want one", tc.key, reqs)
		}
		exactly, _, _ := unstructured.NestedMap(reqs[0].(map[string]any), "exactly")
		if exactly["deviceClassName"] != tc.class || exactly["count"] != tc.count || exactly["allocationMode"] != "ExactCount" {
			t.Errorf("%s: template asks for %v, want %d of %s", tc.key, exactly, tc.count, tc.class)
		}
		name := reqs[0].(map[string]any)["name"]
		claims, _, _ := unstructured.NestedSlice(pred, "resourceClaims")
		want := []any{map[string]any{"name": name, "resourceClaimTemplateName": tmpl.GetName()}}
		if !equalJSON(claims, want) {
			t.Errorf("%s: predictor resourceClaims %v, want %v", tc.key, claims, want)
		}
		if want := map[string]any{"claims": []any{map[string]any{"name": name}}}; !equalJSON(res, want) {
			t.Errorf("%s: model resources %v, want %v (no extended resource)", tc.key, res, want)
		}
		if !dependsOn(d, engine.KindInferenceService, tc.key, engine.KeyFor(tmplKind, tmpl.GetNamespace(), tmpl.GetName())) {
			t.Errorf("%s: the InferenceService does not wait for its ResourceClaimTemplate", tc.key)
		}
	}

	// Two H100s: another template (the API server would refuse the change
	// of a template's count), which the InferenceService names.
	two := compileDRA(t, strings.Replace(draStack, "gpus = 1", "gpus = 2", 1)+strings.Replace(draModels, "gpus        = 1", "gpus        = 2", 1))
	if _, ok := draObjects(two, tmplKind)["b/chat-h100-gpu-2"]; !ok {
		t.Errorf("two H100s: templates %v, want b/chat-h100-gpu-2", slices.Sorted(maps.Keys(draObjects(two, tmplKind))))
	}
	claims, _, _ := unstructured.NestedSlice(draObjects(two, engine.KindInferenceService)["b/chat"].Object, "spec", "predictor", "resourceClaims")
	if len(claims) != 1 || claims[0].(map[string]any)["resourceClaimTemplateName"] != "chat-h100-gpu-2" {
		t.Errorf("two H100s: predictor resourceClaims %v, want the template chat-h100-gpu-2", claims)
	}
}

// equalJSON compares two unstructured values by their JSON.
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// dependsOn reports whether the object of kind k at key ns/name in d
// depends on dep.
func dependsOn(d *engine.Desired, k engine.Kind, key string, dep engine.Key) bool {
	for _, o := range d.Objects {
		if o.Object.GroupVersionKind() == k.GroupVersionKind && o.Object.GetNamespace()+"/"+o.Object.GetName() == key {
			return slices.Contains(o.DependsOn, dep)
		}
	}
	return false
}

// everyProfile is a mig_layout named name for gpu with a device group of
// each of its GPUs' MIG profiles and one with MIG off: seven profiles and
// whole GPUs, eight DeviceClasses on a DRA pool.
func everyProfile(name, gpu string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nmig_layout %q {\n  gpu = %q\n", name, gpu)
	for i, prof := range []string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "", "1g.10gb+me"} {
		if prof == "" {
			fmt.Fprintf(&b, "  device {\n    indexes = [%d]\n    enabled = false\n  }\n", i)
			continue
		}
		fmt.Fprintf(&b, "  device {\n    indexes = [%d]\n    slices  = { %q = 1 }\n  }\n", i, prof)
	}
	return b.String() + "}\n"
}
