package outcome

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// labsConfig: three tenants share one A100 (seven 1g.10gb slices) in
// cohort "labs". vision has 2 slices and may borrow 2 more; speech has 2;
// archive has 1. urgent preempts, routine never does; archive may use
// routine only, so its ClusterQueue never preempts.
const labsConfig = `
gpuform {
  stack     = "labs"
  scheduler = "kueue"
}

priority "urgent" {
  value      = 1000
  preemption = "PreemptLowerPriority"
}

priority "routine" {
  value      = 10
  preemption = "Never"
}

mig_layout "sevenths" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 7 }
}

pool "labs-a100" {
  gpu           = "A100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "labs-a100" }
  mig_layout    = mig_layout.sevenths
}

tenant "vision" {
  quota "labs-a100" {
    slices          = { "1g.10gb" = 2 }
    borrowing_limit = { "1g.10gb" = 2 }
  }
  cohort           = "labs"
  cpu              = "8"
  memory           = "32Gi"
  priorities       = [priority.urgent, priority.routine]
  default_priority = priority.routine
  protect          = false
}

tenant "speech" {
  quota "labs-a100" {
    slices = { "1g.10gb" = 2 }
  }
  cohort           = "labs"
  cpu              = "8"
  memory           = "32Gi"
  priorities       = [priority.urgent, priority.routine]
  default_priority = priority.routine
  protect          = false
}

tenant "archive" {
  quota "labs-a100" {
    slices = { "1g.10gb" = 1 }
  }
  cohort           = "labs"
  cpu              = "4"
  memory           = "16Gi"
  priorities       = [priority.routine]
  default_priority = priority.routine
  protect          = false
}
`

const slice = "nvidia.com/mig-1g.10gb"

var clusterPolicyGVR = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}

// TestTenantsShareMIGSlicesThroughKueue: the labs tenants' Jobs asking for
// MIG slices are admitted up to their nominal quota and borrow within the
// cohort up to the borrowing limit; beyond it they wait, though the cohort
// still has a slice (archive's, which archive then gets); archive, whose
// priorities never preempt, waits for quota it lent; speech's urgent Jobs
// reclaim the slices vision's routine Jobs borrow (InCohortReclamation);
// vision's urgent Job, at vision's nominal quota in a full cohort,
// preempts one of vision's routine Jobs (InClusterQueue) and no other
// tenant's. Every admitted Job's pod is bound to the pool's node, never to
// the stray node with more free slices. Fails if the ClusterQueues miss
// cpu/memory or spec.preemption (issue 14 item 2), if the ResourceQuota
// does not allow what Kueue lets a tenant borrow, or if the GPU Operator
// is not switched to MIG strategy mixed (item 1).
func TestTenantsShareMIGSlicesThroughKueue(t *testing.T) {
	// The pool's node, and a node outside every pool with more slices
	// free: kube-scheduler would prefer it if the pods were not pinned.
	createNodes(t,
		gpuNode("labs-a100-0", "NVIDIA-A100-SXM4-80GB", map[string]string{"outcome.gpuform.dev/group": "labs-a100", "nvidia.com/mig.capable": "true"}, map[string]string{slice: "7"}),
		gpuNode("labs-stray-0", "NVIDIA-A100-SXM4-80GB", map[string]string{"nvidia.com/mig.capable": "true"}, map[string]string{slice: "70"}),
	)
	apply(t, labsConfig)

	cp := get(t, clusterPolicyGVR, "", "cluster-policy")
	if s, _, _ := unstructured.NestedString(cp.Object, "spec", "mig", "strategy"); s != engine.MIGStrategyMixed {
		t.Errorf("ClusterPolicy mig.strategy %q after apply, want %q: the device plugin would not advertise %s", s, engine.MIGStrategyMixed, slice)
	}
	one := map[string]string{slice: "1"}

	// vision: 2 nominal + 2 borrowed; the fifth waits although the cohort
	// still has a free slice (archive's, taken next).
	for i := 1; i <= 5; i++ {
		submit(t, job("vision", fmt.Sprintf("train-%d", i), "routine", one))
		time.Sleep(1100 * time.Millisecond) // distinct creation times: Kueue admits in that order
	}
	eventually(t, "vision: 4 Jobs admitted, 1 waiting", func() (bool, string) {
		ws := workloads(t, "vision")
		n, all := count(ws, workloadState.admitted)
		waiting, _ := count(ws, func(w workloadState) bool { return w.Conditions["QuotaReserved"][0] == "False" })
		return n == 4 && waiting == 1 && len(ws) == 5, all
	})
	if w := workloads(t, "vision")["train-5"]; w.admitted() || !strings.Contains(w.Message, "insufficient") {
		t.Errorf("train-5: %v, want waiting for quota", w)
	}
	assertBound(t, "vision", []string{"train-1", "train-2", "train-3", "train-4"}, "labs-a100-0")

	// archive takes the cohort's last free slice: vision's fifth Job
	// waited on its borrowing limit, not on the cohort.
	submit(t, job("archive", "index-1", "routine", one))
	eventually(t, "archive's Job admitted", func() (bool, string) {
		w := workloads(t, "archive")["index-1"]
		return w.admitted(), w.String()
	})
	assertBound(t, "archive", []string{"index-1"}, "labs-a100-0")

	// The cohort is full; vision borrows 2 of speech's slices. archive
	// asks again (over its nominal quota: it could only borrow) and
	// waits.
	submit(t, job("archive", "index-2", "routine", one))
	consistently(t, "archive's second Job waits, nothing is preempted", 4*time.Second, func() (bool, string) {
		a := workloads(t, "archive")["index-2"]
		n, all := count(workloads(t, "vision"), workloadState.admitted)
		return !a.admitted() && n == 4, a.String() + " / vision: " + all
	})

	// speech, below its nominal quota, submits an urgent Job: it reclaims
	// a slice from vision's routine borrowers.
	submit(t, job("speech", "serve-1", "urgent", one))
	eventually(t, "speech's urgent Job admitted by reclaiming from vision", func() (bool, string) {
		s := workloads(t, "speech")["serve-1"]
		reclaimed, all := count(workloads(t, "vision"), func(w workloadState) bool {
			return w.Conditions["Preempted"] == [2]string{"True", "InCohortReclamation"}
		})
		return s.admitted() && reclaimed == 1, s.String() + " / vision: " + all
	})
	assertBound(t, "speech", []string{"serve-1"}, "labs-a100-0")

	// speech, still below its nominal quota, reclaims the other slice
	// vision borrows: vision is back to its nominal quota.
	submit(t, job("speech", "serve-2", "urgent", one))
	eventually(t, "speech's second urgent Job admitted by reclaiming from vision", func() (bool, string) {
		s := workloads(t, "speech")["serve-2"]
		reclaimed, all := count(workloads(t, "vision"), func(w workloadState) bool {
			return w.Conditions["Preempted"] == [2]string{"True", "InCohortReclamation"}
		})
		admitted, _ := count(workloads(t, "vision"), workloadState.admitted)
		return s.admitted() && reclaimed == 2 && admitted == 2, s.String() + " / vision: " + all
	})

	// vision, at its nominal quota in a full cohort, submits an urgent
	// Job: it preempts one of vision's own routine Jobs (it may not
	// preempt other tenants to borrow).
	submit(t, job("vision", "urgent-1", "urgent", one))
	eventually(t, "vision's urgent Job preempts a routine Job of vision", func() (bool, string) {
		ws := workloads(t, "vision")
		within, all := count(ws, func(w workloadState) bool { return w.Conditions["Preempted"] == [2]string{"True", "InClusterQueue"} })
		return ws["urgent-1"].admitted() && within == 1, all
	})
	assertBound(t, "vision", []string{"urgent-1"}, "labs-a100-0")
	for _, ns := range []string{"speech", "archive"} {
		for _, w := range workloads(t, ns) {
			if w.is("Preempted") {
				t.Errorf("%s's %v was preempted; vision's urgent Job was borrowing nothing, so only vision's own Jobs may go", ns, w)
			}
		}
	}
	if a := workloads(t, "archive")["index-2"]; a.admitted() {
		t.Errorf("archive's second Job was admitted (%v); its queue never preempts and the cohort is full", a)
	}
}

// assertBound waits until each Job's pod is bound, and checks it is bound
// to node and pinned to its pool by Kueue's flavor.
func assertBound(t *testing.T, ns string, jobs []string, node string) {
	t.Helper()
	for _, j := range jobs {
		eventually(t, fmt.Sprintf("the pod of Job %s/%s bound", ns, j), func() (bool, string) {
			var seen []string
			for _, p := range jobPods(t, ns, j) {
				if p.DeletionTimestamp != nil {
					continue
				}
				seen = append(seen, p.Name+"@"+p.Spec.NodeName)
				if p.Spec.NodeName == "" {
					continue
				}
				if p.Spec.NodeName != node {
					t.Fatalf("pod %s/%s bound to %s, outside its pool (want %s); nodeSelector %v", ns, p.Name, p.Spec.NodeName, node, p.Spec.NodeSelector)
				}
				if p.Spec.NodeSelector[engine.LabelPool] == "" {
					t.Errorf("pod %s/%s has no %s node selector: %v", ns, p.Name, engine.LabelPool, p.Spec.NodeSelector)
				}
				return true, ""
			}
			return false, strings.Join(seen, ", ")
		})
	}
}
