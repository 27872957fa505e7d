package outcome

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// orgFleetSource: one configuration for the manager hub (no pool) and
// the workers east and west (one node of six A100s each). Two top-level
// departments, research and product, each with one GPU of its own and two
// tenants of one GPU each, on each worker: a department's tenant may use
// 3 GPUs there (its own, its sibling's and the department's), never the
// other department's. r-alpha is dispatched by MultiKueue from hub.
const orgFleetSource = `
gpuform {
  stack     = "orgfleet"
  scheduler = "kueue"
}

cluster "hub" {
  role = "manager"
}

cluster "east" {
  kubeconfig_secret = "east-kubeconfig"
}

cluster "west" {
  kubeconfig_secret = "west-kubeconfig"
}

pool "a100" {
  gpu           = "A100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "orgfleet-a100" }
  clusters      = ["east", "west"]
}

department "research" {
  quota "a100" {
    gpus = 1
  }
}

department "product" {
  quota "a100" {
    gpus = 1
  }
}

tenant "r-alpha" {
  department = department.research
  dispatch   = "multikueue"
  quota "a100" {
    gpus = 1
  }
  protect = false
}

tenant "r-beta" {
  department = department.research
  quota "a100" {
    gpus = 1
  }
  protect = false
}

tenant "p-gamma" {
  department = department.product
  quota "a100" {
    gpus = 1
  }
  protect = false
}

tenant "p-delta" {
  department = department.product
  quota "a100" {
    gpus = 1
  }
  protect = false
}
`

// TestFleetDepartmentsBorrowWithinNotAcross: the org tree on a fleet of
// three harness API servers with the real Kueue on each (the manager's
// with MultiKueue), every member applied by gpuform's pipeline with the
// configuration loaded for it, as the fleet's apply does.
//
// Through the manager: r-alpha's Job of 4 GPUs, which a worker could run
// only by borrowing product's idle quota, is dispatched and admitted on
// no worker (no pod anywhere); its Job of 3 GPUs, which needs its
// sibling's and its department's GPU, is admitted on the manager and
// runs on one worker. On each worker: p-gamma's Job of 3 GPUs borrows
// p-delta's and product's and runs; its next GPU waits beside research's
// idle quota and the node's free GPUs.
//
// Fails if the departments share quota, if a tenant cannot borrow its
// department's, or if the manager admits less than a worker does for a
// dispatched tenant in a department (its department's Cohort there
// without the workers' department quota and the lending of the tenants
// that are not dispatched).
func TestFleetDepartmentsBorrowWithinNotAcross(t *testing.T) {
	hub, east, west := startFleet(t, "outcome-orgfleet-", func(w string) kubeapitest.GPUNode {
		return gpuNode(w+"-a100", "NVIDIA-A100-SXM4-80GB", map[string]string{"outcome.gpuform.dev/group": "orgfleet-a100", "nvidia.com/gpu.count": "6"}, map[string]string{"nvidia.com/gpu": "6"})
	})
	workers := []*fleetMember{east, west}
	for _, m := range []*fleetMember{east, west, hub} {
		applyOn(t, m.rc, orgFleetSource, m.name)
	}
	for _, w := range workers {
		for ns, want := range map[string]string{"r-alpha": "research", "r-beta": "research", "p-gamma": "product", "p-delta": "product"} {
			if got := cohortOf(t, w, ns); got != want {
				t.Fatalf("%s: ClusterQueue %s cohortName %q, want %q", w.name, ns, got, want)
			}
		}
	}
	if got := cohortOf(t, hub, "r-alpha"); got != "research" {
		t.Fatalf("hub: ClusterQueue r-alpha cohortName %q, want research", got)
	}
	for _, name := range []string{"east", "west"} {
		eventually(t, "MultiKueueCluster "+name+" active", conditionTrue(hub, multiKueueClusterGVR, "", name, "Active"))
	}
	eventually(t, "ClusterQueue r-alpha active on the manager", conditionTrue(hub, clusterQueueGVR, "", "r-alpha", "Active"))
	gpus := func(n string) map[string]string { return map[string]string{"nvidia.com/gpu": n} }

	// 4 GPUs: research holds 3 on each worker, product's 3 stand idle.
	submitOn(t, hub, job("r-alpha", "across", "", gpus("4")))
	eventually(t, "across holds quota on the manager", workloadIs(hub, "r-alpha", "across", "QuotaReserved"))
	for _, w := range workers {
		eventually(t, "across dispatched to "+w.name, workloadIs(w, "r-alpha", "across", "!QuotaReserved"))
	}
	consistently(t, "across is admitted on no worker", 8*time.Second, func() (bool, string) {
		for _, w := range workers {
			if ok, _ := workloadIs(w, "r-alpha", "across", "QuotaReserved")(); ok {
				return false, "quota reserved on " + w.name
			}
		}
		return noPods("r-alpha", "across", hub, east, west)()
	})
	deleteJob(t, hub, "r-alpha", "across")
	for _, m := range []*fleetMember{hub, east, west} {
		eventually(t, "across gone from "+m.name, noWorkload(m, "r-alpha", "across"))
	}

	// On each worker: 3 GPUs for p-gamma (its own, p-delta's, product's),
	// then one more waits though research's 3 and the node's 3 are free.
	for _, w := range workers {
		submitOn(t, w, job("p-gamma", "wide", "", gpus("3")))
	}
	for _, w := range workers {
		eventually(t, "p-gamma's wide runs on "+w.name, runs(w, "p-gamma", "wide"))
		submitOn(t, w, job("p-gamma", "more", "", gpus("1")))
	}
	for _, w := range workers {
		eventually(t, "p-gamma's more waits on "+w.name, workloadIs(w, "p-gamma", "more", "!QuotaReserved"))
	}
	consistently(t, "p-gamma's more does not borrow research's quota", 6*time.Second, func() (bool, string) {
		for _, w := range workers {
			if ok, _ := workloadIs(w, "p-gamma", "more", "QuotaReserved")(); ok {
				return false, "quota reserved on " + w.name
			}
		}
		return noPods("p-gamma", "more", east, west)()
	})

	// 3 GPUs through the manager: r-alpha's own, r-beta's and research's
	// on one worker.
	submitOn(t, hub, job("r-alpha", "within", "", gpus("3")))
	eventually(t, "within admitted on the manager", workloadIs(hub, "r-alpha", "within", "Admitted"))
	eventually(t, "within runs on a worker", func() (bool, string) {
		var on []string
		for _, w := range workers {
			if ok, _ := runs(w, "r-alpha", "within")(); ok {
				on = append(on, w.name)
			}
		}
		return len(on) == 1, fmt.Sprintf("running on %v", on)
	})
	if pods := podsOf(t, hub, "r-alpha", "within"); len(pods) > 0 {
		t.Errorf("within has %d pods on the manager", len(pods))
	}
}

// cohortOf is the cohortName of ClusterQueue name on m.
func cohortOf(t *testing.T, m *fleetMember, name string) string {
	t.Helper()
	cq, err := m.dyn.Resource(clusterQueueGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v", m.name, err)
	}
	c, _, _ := unstructured.NestedString(cq.Object, "spec", "cohortName")
	return c
}

// noPods holds while Job name has no pod on any of ms.
func noPods(ns, name string, ms ...*fleetMember) func() (bool, string) {
	return func() (bool, string) {
		for _, m := range ms {
			pods, err := m.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
			if err != nil {
				return false, err.Error()
			}
			if len(pods.Items) > 0 {
				return false, fmt.Sprintf("%d pods of %s on %s", len(pods.Items), name, m.name)
			}
		}
		return true, ""
	}
}

// noWorkload holds once m has no workload of Job name ("job-NAME-...").
func noWorkload(m *fleetMember, ns, name string) func() (bool, string) {
	return func() (bool, string) {
		list, err := m.dyn.Resource(workloadGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, w := range list.Items {
			if strings.HasPrefix(w.GetName(), "job-"+name+"-") {
				return false, w.GetName() + " on " + m.name
			}
		}
		return true, ""
	}
}

// deleteJob deletes Job name on m, its pods and workload after it.
func deleteJob(t *testing.T, m *fleetMember, ns, name string) {
	t.Helper()
	background := metav1.DeletePropagationBackground
	if err := m.cs.BatchV1().Jobs(ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatalf("delete Job %s/%s on %s: %v", ns, name, m.name, err)
	}
}
