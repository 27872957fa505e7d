package outcome

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// orgConfig: two departments of two tenants each share one node of nine
// GPUs. research has 1 GPU of its own, which its tenants share on top of
// their 2 each; product has none of its own. Neither department has a
// parent, so neither borrows from the other.
const orgConfig = `
gpuform {
  stack     = "org"
  scheduler = "kueue"
}

priority "batch" {
  value      = 10
  preemption = "Never"
}

pool "org-gpu" {
  gpu           = "A100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "org-gpu" }
}

department "research" {
  quota "org-gpu" {
    gpus = 1
  }
}

department "product" {}

tenant "r-alpha" {
  department = department.research
  quota "org-gpu" {
    gpus = 2
  }
  default_priority = priority.batch
  protect          = false
}

tenant "r-beta" {
  department = department.research
  quota "org-gpu" {
    gpus = 2
  }
  default_priority = priority.batch
  protect          = false
}

tenant "p-gamma" {
  department = department.product
  quota "org-gpu" {
    gpus = 2
  }
  default_priority = priority.batch
  protect          = false
}

tenant "p-delta" {
  department = department.product
  quota "org-gpu" {
    gpus = 2
  }
  default_priority = priority.batch
  protect          = false
}
`

var cohortGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "cohorts"}

// TestDepartmentsShareQuotaWithinNotAcross: a research tenant's Jobs
// borrow its idle sibling's GPUs and its department's own GPU, and no
// more, while the other department's four GPUs stand idle; a product
// tenant then borrows its own sibling's GPU. Every admitted Job's pod is
// created (the ResourceQuota allows what Kueue lets it borrow) and bound.
// Every object is applied with strict field validation against Kueue
// v0.17.0's CRDs, the Cohorts among them. Fails if a department is not a
// Cohort, if its tenants' ClusterQueues are not in it, if the Cohort's
// own quota is missing, or if the departments share quota.
func TestDepartmentsShareQuotaWithinNotAcross(t *testing.T) {
	createNodes(t, gpuNode("org-gpu-0", "NVIDIA-A100-SXM4-80GB", map[string]string{"outcome.gpuform.dev/group": "org-gpu", "nvidia.com/gpu.count": "9"}, map[string]string{"nvidia.com/gpu": "9"}))
	apply(t, orgConfig)
	for _, ns := range []string{"r-alpha", "r-beta", "p-gamma", "p-delta"} {
		cq := get(t, clusterQueueGVR, "", ns)
		want := "research"
		if strings.HasPrefix(ns, "p-") {
			want = "product"
		}
		if got, _, _ := unstructured.NestedString(cq.Object, "spec", "cohortName"); got != want {
			t.Fatalf("ClusterQueue %s cohortName %q, want %q", ns, got, want)
		}
	}
	if co := get(t, cohortGVR, "", "research"); co == nil {
		t.Fatal("no Cohort research")
	}
	gpu := map[string]string{"nvidia.com/gpu": "1"}

	// r-alpha: 2 of its own, r-beta's 2 and research's 1; the sixth waits
	// though product's 4 GPUs are idle.
	for i := 1; i <= 6; i++ {
		submit(t, job("r-alpha", fmt.Sprintf("train-%d", i), "", gpu))
		time.Sleep(1100 * time.Millisecond) // distinct creation times: Kueue admits in that order
	}
	eventually(t, "r-alpha: 5 Jobs admitted, 1 waiting", func() (bool, string) {
		ws := workloads(t, "r-alpha")
		n, all := count(ws, workloadState.admitted)
		waiting, _ := count(ws, func(w workloadState) bool { return w.Conditions["QuotaReserved"][0] == "False" })
		return n == 5 && waiting == 1 && len(ws) == 6, all
	})
	consistently(t, "r-alpha's sixth Job does not borrow from product", 4*time.Second, func() (bool, string) {
		w := workloads(t, "r-alpha")["train-6"]
		return !w.admitted() && strings.Contains(w.Message, "insufficient"), w.String()
	})
	assertBound(t, "r-alpha", []string{"train-1", "train-2", "train-3", "train-4", "train-5"}, "org-gpu-0")

	// r-beta lent everything and research's GPU is taken: r-beta's Job
	// waits (no preemption: batch never preempts), product's GPUs idle.
	submit(t, job("r-beta", "eval-1", "", gpu))
	consistently(t, "r-beta's Job waits: research is full, product is not research's", 4*time.Second, func() (bool, string) {
		w := workloads(t, "r-beta")["eval-1"]
		return !w.admitted(), w.String()
	})

	// p-gamma borrows p-delta's GPUs inside product: 4 admitted, the
	// fifth waits (research's GPUs are all in use anyway, and not its).
	for i := 1; i <= 5; i++ {
		submit(t, job("p-gamma", fmt.Sprintf("serve-%d", i), "", gpu))
		time.Sleep(1100 * time.Millisecond)
	}
	eventually(t, "p-gamma: 4 Jobs admitted, 1 waiting", func() (bool, string) {
		ws := workloads(t, "p-gamma")
		n, all := count(ws, workloadState.admitted)
		return n == 4 && len(ws) == 5 && !ws["serve-5"].admitted(), all
	})
	assertBound(t, "p-gamma", []string{"serve-1", "serve-2", "serve-3", "serve-4"}, "org-gpu-0")
}
