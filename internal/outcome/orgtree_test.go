package outcome

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// orgConfig: two trees of departments share one node of eleven GPUs.
// lab (2 GPUs of its own) holds research (1 of its own, which its two
// tenants share on top of their 2 each, and at most 1 borrowed from lab);
// product (none of its own) holds two tenants of 2 each. The trees have
// no common parent, so neither borrows from the other.
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

department "lab" {
  quota "org-gpu" {
    gpus = 2
  }
}

department "research" {
  parent = department.lab
  quota "org-gpu" {
    gpus            = 1
    borrowing_limit = { gpus = 1 }
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
// borrow its idle sibling's GPUs, its department's own GPU and one of its
// parent lab's (research's borrowing limit), and no more, while lab's
// other GPU and the other tree's four stand idle; a product tenant then
// borrows its own sibling's GPUs, and not lab's free one. Every admitted Job's pod is
// created (the ResourceQuota allows what Kueue lets it borrow) and bound.
// Every object is applied with strict field validation against Kueue
// v0.17.0's CRDs, the Cohorts among them. Fails if a department is not a
// Cohort, if its tenants' ClusterQueues are not in it, if the Cohort's
// own quota is missing, or if the departments share quota.
func TestDepartmentsShareQuotaWithinNotAcross(t *testing.T) {
	createNodes(t, gpuNode("org-gpu-0", "NVIDIA-A100-SXM4-80GB", map[string]string{"outcome.gpuform.dev/group": "org-gpu", "nvidia.com/gpu.count": "11"}, map[string]string{"nvidia.com/gpu": "11"}))
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
	if p, _, _ := unstructured.NestedString(get(t, cohortGVR, "", "research").Object, "spec", "parentName"); p != "lab" {
		t.Fatalf("Cohort research parentName %q, want lab", p)
	}
	gpu := map[string]string{"nvidia.com/gpu": "1"}

	// r-alpha: 2 of its own, r-beta's 2, research's 1 and 1 of lab's; the
	// seventh waits though lab has 1 more and product's 4 GPUs are idle.
	for i := 1; i <= 7; i++ {
		submit(t, job("r-alpha", fmt.Sprintf("train-%d", i), "", gpu))
		time.Sleep(1100 * time.Millisecond) // distinct creation times: Kueue admits in that order
	}
	eventually(t, "r-alpha: 6 Jobs admitted, 1 waiting", func() (bool, string) {
		ws := workloads(t, "r-alpha")
		n, all := count(ws, workloadState.admitted)
		waiting, _ := count(ws, func(w workloadState) bool { return w.Conditions["QuotaReserved"][0] == "False" })
		return n == 6 && waiting == 1 && len(ws) == 7, all
	})
	consistently(t, "r-alpha's seventh Job borrows neither past research's limit nor from product", 4*time.Second, func() (bool, string) {
		w := workloads(t, "r-alpha")["train-7"]
		return !w.admitted() && strings.Contains(w.Message, "insufficient"), w.String()
	})
	assertBound(t, "r-alpha", []string{"train-1", "train-2", "train-3", "train-4", "train-5", "train-6"}, "org-gpu-0")

	// r-beta lent everything, research's GPU and what it may borrow from
	// lab are taken: r-beta's Job waits (batch never preempts) beside lab's
	// free GPU and product's idle ones.
	submit(t, job("r-beta", "eval-1", "", gpu))
	consistently(t, "r-beta's Job waits: research is full, product is not research's", 4*time.Second, func() (bool, string) {
		w := workloads(t, "r-beta")["eval-1"]
		return !w.admitted(), w.String()
	})

	// p-gamma borrows p-delta's GPUs inside product: 4 admitted, the
	// fifth waits beside lab's free GPU, which is not its tree's.
	for i := 1; i <= 5; i++ {
		submit(t, job("p-gamma", fmt.Sprintf("serve-%d", i), "", gpu))
		time.Sleep(1100 * time.Millisecond)
	}
	eventually(t, "p-gamma: 4 Jobs admitted, 1 waiting", func() (bool, string) {
		ws := workloads(t, "p-gamma")
		n, all := count(ws, workloadState.admitted)
		return n == 4 && len(ws) == 5 && !ws["serve-5"].admitted(), all
	})
	consistently(t, "p-gamma's fifth Job does not borrow lab's free GPU", 4*time.Second, func() (bool, string) {
		w := workloads(t, "p-gamma")["serve-5"]
		return !w.admitted(), w.String()
	})
	assertBound(t, "p-gamma", []string{"serve-1", "serve-2", "serve-3", "serve-4"}, "org-gpu-0")
}
