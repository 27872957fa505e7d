package outcome

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// kmConfig: a model on a DRA pool of whole L4s under Kueue; tenant serve
// has one of them, and its model may scale to two replicas. (No other
// test's stack has a DRA pool of L4s: a DeviceClass selects by product,
// not by node.)
const kmConfig = `
gpuform {
  stack     = "drakueuemodel"
  scheduler = "kueue"
}

pool "kml4" {
  gpu           = "L4"
  mode          = "dra"
  node_selector = { "outcome.gpuform.dev/group" = "drakueuemodel-l4" }
}

tenant "serve" {
  namespace = "drakueuemodel-serve"
  admins    = ["user:drakueuemodel-admin"]
  protect   = false
  quota "kml4" {
    gpus = 1
  }
}

model "chat" {
  tenant      = tenant.serve
  pool        = pool.kml4
  gpus        = 1
  format      = "huggingface"
  storage_uri = "s3://models/chat"
  replicas    = { min = 1, max = 2 }
}
`

// kmClass is the DeviceClass of kmConfig's pool, which the package's
// Kueue maps (draKueueMappings).
const kmClass = "gpuform-drakueuemodel-kml4-gpu"

// planDiags plans src (one main.hcl) against the cluster and returns the
// result, every diagnostic the pipeline reported and its error.
func planDiags(t *testing.T, src string) (*stack.PlanResult, hcl.Diagnostics, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := kube.NewForConfig(rest.CopyConfig(restCfg), "kubeapi", kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var diags hcl.Diagnostics
	st := stack.New(stack.Dir(dir), stack.Using(kube.StackCluster(client)), stack.Options{
		Diagnostics: func(_ *config.Config, d hcl.Diagnostics) { diags = append(diags, d...) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := st.Plan(ctx, stack.PlanOptions{})
	return res, diags, err
}

// TestKueueConfigurationMapsTheDRAPool: plan reads Kueue's configuration
// from its ConfigMap (kueue-system/kueue-manager-config, which the harness
// writes as Kueue's standard install does, holding the mappings the
// package's Kueue runs with). A stack whose DeviceClass it maps plans
// clean and says so; the same pool in a stack whose class it does not map
// is refused, with the mapping to add.
func TestKueueConfigurationMapsTheDRAPool(t *testing.T) {
	const node = "drakueuemodel-l4-0"
	createNodes(t, gpuNode(node, "NVIDIA-L4", map[string]string{"outcome.gpuform.dev/group": "drakueuemodel-l4", "nvidia.com/gpu.count": "2"}, nil))
	publishSlices(t, kubeapitest.DRANode{Node: node, Product: "NVIDIA L4", GPUs: 2, MemoryBytes: 24 << 30})

	res, diags, err := planDiags(t, kmConfig)
	if err != nil {
		t.Fatalf("plan of the mapped stack: %v (diagnostics %v)", err, diags)
	}
	if want := "configuration kueue-system/kueue-manager-config maps 1 of the 1 DeviceClasses"; !strings.Contains(res.Plan.Capacity.Kueue, want) {
		t.Errorf("plan says of Kueue %q, want %q", res.Plan.Capacity.Kueue, want)
	}
	if want := "its DRA feature gate is on"; !strings.Contains(res.Plan.Capacity.Kueue, want) {
		t.Errorf("plan says of Kueue %q, want %q", res.Plan.Capacity.Kueue, want)
	}
	if i := slices.IndexFunc(diags, func(d *hcl.Diagnostic) bool { return strings.Contains(d.Summary, "Kueue") }); i >= 0 {
		t.Errorf("plan of the mapped stack: %s: %s", diags[i].Summary, diags[i].Detail)
	}

	unmapped := strings.Replace(kmConfig, `stack     = "drakueuemodel"`, `stack     = "drakueuenomap"`, 1)
	_, diags, err = planDiags(t, unmapped)
	var cerr *engine.ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("plan of a stack whose DeviceClass Kueue does not map: %v, want a refusal", err)
	}
	const class = "gpuform-drakueuenomap-kml4-gpu"
	var got []string
	for _, d := range cerr.Diags {
		got = append(got, d.Summary+": "+d.Detail)
		if d.Summary == "DeviceClasses Kueue does not count" && strings.Contains(d.Detail, "- name: "+capacity.DeviceClassQuota(class)+"\n    deviceClassNames: ["+class+"]") {
			return
		}
	}
	t.Errorf("refusal %q, want \"DeviceClasses Kueue does not count\" with the mapping of %s", got, class)
}

// TestDRAModelUnderKueue: a model on a DRA pool under Kueue. Its predictor
// pods (as KServe makes them from the InferenceService, created by the
// tenant's admin acting as themself) carry the tenant's LocalQueue; Kueue
// admits the first within the ClusterQueue's quota of the pool's
// DeviceClass, and kube-scheduler binds it with a device of the pool
// through the claim made from the model's ResourceClaimTemplate. The
// replica beyond that quota waits: Kueue holds it for want of quota on the
// class, its scheduling gate stays and it is bound nowhere.
func TestDRAModelUnderKueue(t *testing.T) {
	ctx := kubeapitest.Context(t)
	const ns, node = "drakueuemodel-serve", "drakueuemodel-l4-1"
	createNodes(t, gpuNode(node, "NVIDIA-L4", map[string]string{"outcome.gpuform.dev/group": "drakueuemodel-l4", "nvidia.com/gpu.count": "2"}, nil))
	publishSlices(t, kubeapitest.DRANode{Node: node, Product: "NVIDIA L4", GPUs: 2, MemoryBytes: 24 << 30})
	apply(t, kmConfig)
	admin := asTenant(t, "drakueuemodel-admin")
	waitQuota(t, ns, kmClass)
	checkTemplate(ctx, t, ns, "chat-kml4-gpu-1", kmClass, 1)

	first := draModelPod(t, ns, "chat", 0)
	if first.Labels["kueue.x-k8s.io/queue-name"] == "" {
		t.Fatalf("the model's pod has labels %v: want Kueue's queue label", first.Labels)
	}
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, first, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("the model's first pod, created by the tenant's admin: %v", err)
	}
	eventually(t, "Kueue admits the first replica and it is bound with a device of the pool", func() (bool, string) {
		w := workloads(t, ns)[first.Name]
		p, err := cs.CoreV1().Pods(ns).Get(ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if !w.admitted() || len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return false, fmt.Sprintf("workload %v, node %q, claims %v", w, p.Spec.NodeName, p.Status.ResourceClaimStatuses)
		}
		claim, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, *p.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
			return false, fmt.Sprintf("pod on %q, claim %s not allocated", p.Spec.NodeName, claim.Name)
		}
		r := claim.Status.Allocation.Devices.Results[0]
		dev := publishedDevice(ctx, t, r.Pool, r.Device)
		return p.Spec.NodeName == node && r.Pool == node && attr(dev, "productName") == "NVIDIA L4",
			fmt.Sprintf("pod on %q, device %s/%s %s", p.Spec.NodeName, r.Pool, r.Device, attr(dev, "productName"))
	})

	second := draModelPod(t, ns, "chat", 1)
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, second, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("the model's second pod: %v", err)
	}
	resourceName := capacity.DeviceClassQuota(kmClass)
	eventually(t, "Kueue holds the second replica for want of quota on the device class", func() (bool, string) {
		ws := workloads(t, ns)
		w, ok := ws[second.Name]
		return ok && !w.is("QuotaReserved") && strings.Contains(w.Message, resourceName), fmt.Sprint(ws)
	})
	consistently(t, "the second replica stays gated and unbound", 5*time.Second, func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, second.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName == "" && len(p.Spec.SchedulingGates) > 0, fmt.Sprintf("node %q, gates %v", p.Spec.NodeName, p.Spec.SchedulingGates)
	})
}
