package compile_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

func TestCompileGolden(t *testing.T) {
	tests := []struct {
		name    string
		example string
		replace []string
	}{
		{"bank-kueue", "bank", nil},
		{"bank-none", "bank", enginetest.BankUnder("none")},
		{"bank-volcano", "bank", enginetest.BankUnder("volcano")},
		{"bank-agent", "bank", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`)},
		{"quickstart", "quickstart", nil},
		{"isolation", "isolation", nil},
		{"isolation-none", "isolation", []string{`scheduler = "kueue"`, `scheduler = "none"`}},
		{"shared", "shared", nil},
		{"shared-none", "shared", []string{`scheduler   = "kueue"`, `scheduler   = "none"`}},
		{"dra", "dra", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := enginetest.LoadExample(t, tt.example, tt.replace...)
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := render.YAML(&buf, d, false); err != nil {
				t.Fatal(err)
			}
			for _, p := range d.Pools {
				buf.WriteString("# node pool " + p.Address + "\n")
				if err := render.YAML(&buf, &engine.Desired{Objects: []*engine.Object{{Address: p.Address, Object: enginetest.NodeFor(p)}}}, false); err != nil {
					t.Fatal(err)
				}
			}
			golden(t, tt.name+".yaml", buf.String())
		})
	}
}

func TestCompileEdges(t *testing.T) {
	cfg := enginetest.LoadExample(t, "bank")
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[engine.Key]bool{}
	for _, o := range d.Objects {
		if keys[o.Key()] {
			t.Errorf("object %s compiled twice", o.Key())
		}
		keys[o.Key()] = true
	}
	for _, o := range d.Objects {
		for _, dep := range o.DependsOn {
			if dep.Kind == "ConfigMap" || keys[dep] {
				continue
			}
			t.Errorf("%s depends on %s, which is not compiled", o.Key(), dep)
		}
		ns := o.Object.GetNamespace()
		if ns == "" || ns == "gpu-operator" || ns == "monitoring" { // the GPU Operator's and the monitoring stack's
			continue
		}
		found := false
		for _, dep := range o.DependsOn {
			if dep == (engine.Key{Kind: "Namespace", Name: ns}) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s lives in namespace %s but does not depend on it", o.Key(), ns)
		}
		if o.Object.GetLabels()[engine.LabelStack] != "bank-prod" || o.Object.GetLabels()[engine.LabelManagedBy] != "gpuform" {
			t.Errorf("%s lacks the ownership labels: %v", o.Key(), o.Object.GetLabels())
		}
	}
	isvc := d.Lookup(engine.Key{Group: "serving.kserve.io", Kind: "InferenceService", Namespace: "risk", Name: "fraud-detector"})
	if isvc == nil {
		t.Fatal("no InferenceService risk/fraud-detector")
	}
	wantDeps := []engine.Key{
		{Kind: "Namespace", Name: "risk"},
		{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "realtime"},
		{Group: "kueue.x-k8s.io", Kind: "LocalQueue", Namespace: "risk", Name: "default"},
		{Group: "kueue.x-k8s.io", Kind: "WorkloadPriorityClass", Name: "realtime"},
	}
	for _, w := range wantDeps {
		found := false
		for _, dep := range isvc.DependsOn {
			found = found || dep == w
		}
		if !found {
			t.Errorf("fraud-detector does not depend on %s; it has %v", w, isvc.DependsOn)
		}
	}
}

// A tenant's CPU limit from a sensitive variable marks its ResourceQuota
// sensitive, and render leaves it out. (A quota's GPUs may not be
// sensitive: they are figures of the capacity table; config refuses them.)
func TestCompileMarksQuotaFromSensitiveVariable(t *testing.T) {
	src := `
gpuform { stack = "s" }
variable "secret_cpu" {
  type      = string
  default   = "37"
  sensitive = true
}
pool "p" {
  gpu = "H100-80GB"
}
tenant "t" {
  cpu = var.secret_cpu
  quota "p" {
    gpus = 3
  }
}
`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rq := d.Lookup(engine.Key{Kind: "ResourceQuota", Namespace: "t", Name: "gpuform"})
	if rq == nil || !rq.Sensitive {
		t.Fatalf("the quota holding a sensitive value is not marked sensitive: %+v", rq)
	}
	var buf bytes.Buffer
	if err := render.YAML(&buf, d, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"37"`) || strings.Contains(buf.String(), `requests.nvidia.com/gpu: "3"`) {
		t.Errorf("render printed the sensitive quota:\n%s", buf.String())
	}
}
