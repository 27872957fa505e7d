package compile_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// objectsOf returns the compiled objects of kind, by name.
func objectsOf(d *engine.Desired, kind string) map[string]*engine.Object {
	out := map[string]*engine.Object{}
	for _, o := range d.Objects {
		if o.Object.GetKind() == kind {
			out[o.Object.GetName()] = o
		}
	}
	return out
}

// TestKueueClusterQueueCoversWhatWorkloadsRequest checks issue 14's item 2:
// Kueue admits a workload only when its ClusterQueue covers every resource
// it requests, and every pod (a model's, a Job's) requests cpu and memory,
// so each tenant's ClusterQueue covers cpu and memory (and pods when the
// tenant limits them) with the tenant's limits, in a resource group of the
// stack's any-node ResourceFlavor; and spec.preemption follows the
// priorities the tenant may use.
func TestKueueClusterQueueCoversWhatWorkloadsRequest(t *testing.T) {
	d, err := compile.Compile(enginetest.LoadExample(t, "bank"))
	if err != nil {
		t.Fatal(err)
	}
	flavor := compile.AnyNodeFlavor("bank-prod")
	rf := objectsOf(d, "ResourceFlavor")[flavor]
	if rf == nil || rf.Address != engine.StackAddress {
		t.Fatalf("ResourceFlavor %s: %+v, want one at address %q", flavor, rf, engine.StackAddress)
	}
	if labels, _, _ := unstructured.NestedMap(rf.Object.Object, "spec", "nodeLabels"); len(labels) != 0 {
		t.Errorf("the any-node flavor selects nodes %v; it must select none", labels)
	}
	tests := []struct {
		cq                  string
		cpu, memory, pods   string // "" for not covered
		within, reclaim     string
		waitsForAnyNodeFlav bool
	}{
		// risk: cpu 64, memory 256Gi, pods 50; realtime preempts.
		{"risk", "64", "256Gi", "50", "LowerPriority", "LowerPriority", true},
		// chatbot: no pods limit.
		{"chatbot", "32", "128Gi", "", "LowerPriority", "LowerPriority", true},
		// ocr: no cpu or memory set: covered all the same; batch only (Never).
		{"ocr-docs", "1000000", "1Pi", "", "Never", "Never", true},
	}
	cqs := objectsOf(d, "ClusterQueue")
	for _, tt := range tests {
		cq := cqs[tt.cq]
		if cq == nil {
			t.Fatalf("no ClusterQueue %s", tt.cq)
		}
		groups, _, _ := unstructured.NestedSlice(cq.Object.Object, "spec", "resourceGroups")
		quota := map[string]string{} // resource -> nominal quota in the any-node flavor
		borrow := map[string]any{}
		covered := map[string]int{}
		for _, g := range groups {
			res, _, _ := unstructured.NestedStringSlice(g.(map[string]any), "coveredResources")
			for _, r := range res {
				covered[r]++
			}
			flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
			for _, f := range flavors {
				if f.(map[string]any)["name"] != flavor {
					continue
				}
				rs, _, _ := unstructured.NestedSlice(f.(map[string]any), "resources")
				for _, r := range rs {
					m := r.(map[string]any)
					quota[m["name"].(string)] = m["nominalQuota"].(string)
					borrow[m["name"].(string)] = m["borrowingLimit"]
				}
			}
		}
		for r, want := range map[string]string{"cpu": tt.cpu, "memory": tt.memory, "pods": tt.pods} {
			if quota[r] != want {
				t.Errorf("ClusterQueue %s: %s nominal quota %q in flavor %s, want %q", tt.cq, r, quota[r], flavor, want)
			}
			if want != "" && borrow[r] != "0" {
				t.Errorf("ClusterQueue %s: %s borrowing limit %v, want 0 (the tenant's limit is hard)", tt.cq, r, borrow[r])
			}
		}
		for r, n := range covered {
			if n != 1 {
				t.Errorf("ClusterQueue %s covers %s in %d resource groups; Kueue wants exactly one", tt.cq, r, n)
			}
		}
		within, _, _ := unstructured.NestedString(cq.Object.Object, "spec", "preemption", "withinClusterQueue")
		reclaim, _, _ := unstructured.NestedString(cq.Object.Object, "spec", "preemption", "reclaimWithinCohort")
		borrowPolicy, _, _ := unstructured.NestedString(cq.Object.Object, "spec", "preemption", "borrowWithinCohort", "policy")
		if within != tt.within || reclaim != tt.reclaim || borrowPolicy != "Never" {
			t.Errorf("ClusterQueue %s preemption: within %q, reclaim %q, borrow %q; want %q, %q, Never", tt.cq, within, reclaim, borrowPolicy, tt.within, tt.reclaim)
		}
		if got := hasKey(cq.DependsOn, engine.Key{Group: "kueue.x-k8s.io", Kind: "ResourceFlavor", Name: flavor}); got != tt.waitsForAnyNodeFlav {
			t.Errorf("ClusterQueue %s waits for flavor %s: %t", tt.cq, flavor, got)
		}
	}
}

// TestKueuePreemptionOfTenantsWithoutPriorities: a tenant that lists no
// priorities may use any of the stack's, so it preempts when one of them
// does; without a cohort no borrowing limit is written (Kueue refuses one).
func TestKueuePreemptionOfTenantsWithoutPriorities(t *testing.T) {
	cfg := enginetest.LoadExample(t, "bank",
		`  priorities       = [priority.batch]
  default_priority = priority.batch
  admins           = local.admins`, `  admins           = local.admins`)
	for _, tn := range cfg.Tenants {
		if tn.Namespace == "ocr-docs" {
			tn.Cohort = ""
		}
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cq := objectsOf(d, "ClusterQueue")["ocr-docs"]
	if within, _, _ := unstructured.NestedString(cq.Object.Object, "spec", "preemption", "withinClusterQueue"); within != "LowerPriority" {
		t.Errorf("tenant ocr lists no priorities and the stack's realtime preempts: withinClusterQueue %q, want LowerPriority", within)
	}
	groups, _, _ := unstructured.NestedSlice(cq.Object.Object, "spec", "resourceGroups")
	last := groups[len(groups)-1].(map[string]any)
	flavors, _, _ := unstructured.NestedSlice(last, "flavors")
	rs, _, _ := unstructured.NestedSlice(flavors[0].(map[string]any), "resources")
	for _, r := range rs {
		if _, ok := r.(map[string]any)["borrowingLimit"]; ok {
			t.Errorf("a ClusterQueue without cohort has a borrowing limit: %v", r)
		}
	}
}

// TestVolcanoModelsUseTheirQueue checks issue 14's item 3: under Volcano a
// model's pods are scheduled by Volcano from their tenant's Queue, so the
// predictor names scheduler volcano and carries the queue annotation, and
// the model waits for its Queue.
func TestVolcanoModelsUseTheirQueue(t *testing.T) {
	d, err := compile.Compile(enginetest.LoadExample(t, "bank", enginetest.BankUnder("volcano")...))
	if err != nil {
		t.Fatal(err)
	}
	isvcs := objectsOf(d, "InferenceService")
	if len(isvcs) == 0 {
		t.Fatal("no InferenceService compiled")
	}
	for _, o := range isvcs {
		ns := o.Object.GetNamespace()
		sched, _, _ := unstructured.NestedString(o.Object.Object, "spec", "predictor", "schedulerName")
		queue, _, _ := unstructured.NestedString(o.Object.Object, "spec", "predictor", "annotations", compile.VolcanoQueueAnnotation)
		if sched != "volcano" || queue != ns {
			t.Errorf("%s: schedulerName %q, queue annotation %q; want volcano and %q", o.Address, sched, queue, ns)
		}
		if !hasKey(o.DependsOn, engine.Key{Group: "scheduling.volcano.sh", Kind: "Queue", Name: ns}) {
			t.Errorf("%s does not wait for Queue %s: %v", o.Address, ns, o.DependsOn)
		}
		if _, ok := objectsOf(d, "Queue")[ns]; !ok {
			t.Errorf("%s names Queue %s, which is not compiled", o.Address, ns)
		}
	}
}

// TestAgentTurnsMIGManagerOff checks issue 14's item 5: the agent backend
// labels its MIG pools' nodes nvidia.com/gpu.deploy.mig-manager=false, so
// the GPU Operator's mig-manager (which, without gpuform's mig.config
// label, would disable MIG) does not run there; the gpu-operator backend
// leaves the label alone.
func TestAgentTurnsMIGManagerOff(t *testing.T) {
	for _, tt := range []struct {
		backend, want string
	}{{"agent", "false"}, {"gpu-operator", ""}} {
		cfg := enginetest.LoadExample(t, "bank", `scheduler = "kueue"`, `scheduler = "kueue"
  mig_backend = "`+tt.backend+`"`)
		d, err := compile.Compile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, np := range d.Pools {
			want := tt.want
			if np.MIGState == "" {
				want = "" // not a MIG pool
			}
			if got := np.Labels[engine.LabelDeployMIGManager]; got != want {
				t.Errorf("%s backend, %s: %s=%q, want %q", tt.backend, np.Address, engine.LabelDeployMIGManager, got, want)
			}
		}
	}
}

// TestKueueResourceQuotaLetsBorrowersRun: under Kueue a tenant's
// ResourceQuota (checked when a Job's pods are created) allows what Kueue
// may admit by borrowing: its nominal quota plus, per pool, what the
// cohort's other tenants lend (capped by their lending limits and its own
// borrowing limits). Found by TestTenantsShareMIGSlicesThroughKueue: with
// the nominal quota alone, borrowed Jobs were admitted and never got a pod.
func TestKueueResourceQuotaLetsBorrowersRun(t *testing.T) {
	for _, tt := range []struct {
		scheduler string
		want      map[string]map[string]string // namespace -> resource -> hard
	}{
		{"kueue", map[string]map[string]string{
			// chatbot: risk lends 2 x 1g.10gb (its 3g.40gb lending limit
			// is 0), ocr lends 2 GPUs of h100.
			"chatbot": {"requests.nvidia.com/gpu": "6", "requests.nvidia.com/mig-1g.10gb": "4", "requests.nvidia.com/mig-2g.20gb": "2"},
			// risk: borrowing limit 1 x 3g.40gb, but nobody lends one.
			"risk":     {"requests.nvidia.com/mig-3g.40gb": "2", "requests.nvidia.com/mig-1g.10gb": "4", "requests.cpu": "64"},
			"ocr-docs": {"requests.nvidia.com/gpu": "6"},
		}},
		{"volcano", map[string]map[string]string{
			"chatbot": {"requests.nvidia.com/gpu": "4", "requests.nvidia.com/mig-1g.10gb": "2"},
		}},
	} {
		d, err := compile.Compile(enginetest.LoadExample(t, "bank", enginetest.BankUnder(tt.scheduler)...))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, rq := range d.Objects {
			if rq.Object.GetKind() != "ResourceQuota" || tt.want[rq.Object.GetNamespace()] == nil {
				continue
			}
			seen++
			for r, want := range tt.want[rq.Object.GetNamespace()] {
				if got, _, _ := unstructured.NestedString(rq.Object.Object, "spec", "hard", r); got != want {
					t.Errorf("%s: ResourceQuota %s/gpuform %s = %q, want %q", tt.scheduler, rq.Object.GetNamespace(), r, got, want)
				}
			}
		}
		if seen != len(tt.want) {
			t.Errorf("%s: checked %d ResourceQuotas, want %d", tt.scheduler, seen, len(tt.want))
		}
	}
}
