package outcome

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// draKueueConfig: a DRA pool of whole L40Ss under Kueue; tenant lab has
// one of them. (No other test's stack has a DRA pool of L40Ss: a
// DeviceClass selects by product, not by node.)
const draKueueConfig = `
gpuform {
  stack     = "drakueue"
  scheduler = "kueue"
}

pool "l40s" {
  gpu           = "L40S"
  mode          = "dra"
  node_selector = { "outcome.gpuform.dev/group" = "drakueue-l40s" }
}

tenant "lab" {
  namespace = "drakueue-lab"
  admins    = ["user:lab-admin"]
  protect   = false
  quota "l40s" {
    gpus = 1
  }
}
`

// draKueueClass is the DeviceClass of draKueueConfig's pool.
const draKueueClass = "gpuform-drakueue-l40s-gpu"

// draKueueMappings are the flags that give the package's Kueue the
// device-class mapping docs/language.md ("DRA pools") asks of a Kueue that counts DRA
// pools: each DeviceClass of the stacks under Kueue (this file's and
// dra_kueue_models_test.go's) as its device quota's resource.
func draKueueMappings() []string {
	var out []string
	for _, class := range []string{draKueueClass, kmClass} {
		out = append(out, "--dra-mapping", capacity.DeviceClassQuota(class)+"="+class)
	}
	return out
}

// TestDRAPoolUnderKueue: a tenant's admin, acting as themself, submits two
// Jobs to its LocalQueue whose pods each claim one device of its DRA
// pool's DeviceClass through a ResourceClaimTemplate, with a quota of one
// such device. Kueue admits the first, whose pod gets a device of the
// pool from kube-scheduler, and holds the second for want of quota on that
// device class; the namespace's ResourceQuota is not what stops it.
func TestDRAPoolUnderKueue(t *testing.T) {
	ctx := kubeapitest.Context(t)
	const ns, node = "drakueue-lab", "drakueue-l40s-0"
	createNodes(t, gpuNode(node, "NVIDIA-L40S", map[string]string{"outcome.gpuform.dev/group": "drakueue-l40s", "nvidia.com/gpu.count": "2"}, nil))
	publishSlices(t,
		kubeapitest.DRANode{Node: node, Product: "NVIDIA L40S", GPUs: 2, MemoryBytes: 48 << 30},
	)
	apply(t, draKueueConfig)
	lab := asTenant(t, "lab-admin")
	waitQuota(t, ns, draKueueClass)

	tmpl := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "one-l40s", Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name:    "gpu",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: draKueueClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}}},
	}
	if _, err := lab.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("the tenant's ResourceClaimTemplate: %v", err)
	}
	for _, name := range []string{"first", "second"} {
		j := claimJob(ns, name, tmpl.Name)
		if _, err := lab.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("the tenant's Job %s: %v", name, err)
		}
		if name == "first" {
			eventually(t, "Kueue admits the first Job", func() (bool, string) {
				n, all := count(workloads(t, ns), func(w workloadState) bool { return w.Owner == "first" && w.admitted() })
				return n == 1, all
			})
		}
	}

	eventually(t, "the first Job's pod bound to "+node+" with a device of the pool", func() (bool, string) {
		pods := jobPods(t, ns, "first")
		if len(pods) != 1 {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		p := pods[0]
		if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return false, fmt.Sprintf("pod %s on %q, no claim made from the template yet", p.Name, p.Spec.NodeName)
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
		return p.Spec.NodeName == node && r.Pool == node && attr(dev, "type") == "gpu",
			fmt.Sprintf("pod on %q, device %s/%s of type %s", p.Spec.NodeName, r.Pool, r.Device, attr(dev, "type"))
	})

	resourceName := capacity.DeviceClassQuota(draKueueClass)
	eventually(t, "Kueue holds the second Job for want of quota on the device class", func() (bool, string) {
		ws := workloads(t, ns)
		w, ok := ws["second"]
		return ok && !w.is("QuotaReserved") && strings.Contains(w.Message, resourceName), fmt.Sprint(ws)
	})
	consistently(t, "the second Job stays suspended, with no pod", 5*time.Second, func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "second", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pods := jobPods(t, ns, "second")
		return j.Spec.Suspend != nil && *j.Spec.Suspend && len(pods) == 0, fmt.Sprintf("suspend %v, %d pods", j.Spec.Suspend, len(pods))
	})
}

// claimJob is a Job of one pod, in gpuform's LocalQueue, whose container
// uses a claim made from ResourceClaimTemplate tmpl.
func claimJob(ns, name, tmpl string) *batchv1.Job {
	j := job(ns, name, "", nil)
	spec := &j.Spec.Template.Spec
	spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl}}
	spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	return j
}
