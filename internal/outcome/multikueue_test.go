package outcome

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/kinds"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// fleetSource: tenant train has one H100 on each cluster it is placed on.
// The manager's copy of the configuration dispatches it by MultiKueue to
// the workers east and west; each worker's copy is the ordinary one.
const fleetSource = `
gpuform {
  stack     = "fleet"
  scheduler = "kueue"
}

pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "fleet-h100" }
}

tenant "train" {
  quota "h100" {
    gpus = 1
  }
  protect = false
}
`

// fleetManagerSource is the fleet of fleetSource as the manager hub loads
// it: hub has no pool (a pure manager), train is dispatched by MultiKueue
// to east and west, whose configurations are fleetSource's, so the
// manager's ClusterQueue for train holds their sum: 2 H100s.
const fleetManagerSource = `
gpuform {
  stack     = "fleet"
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

pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "fleet-h100" }
  clusters      = ["east", "west"]
}

tenant "train" {
  dispatch = "multikueue"
  quota "h100" {
    gpus = 1
  }
  protect = false
}
`

// fleetMember is one harness API server of the fleet, with its Kueue and
// clients.
type fleetMember struct {
	name string
	srv  *kubeapitest.Server
	rc   *rest.Config
	cs   *kubernetes.Clientset
	dyn  *dynamic.DynamicClient
}

// startMember starts an API server with kube-scheduler and the Job
// controller, the kubelets' stand-in and Kueue (with kueueFlags) under
// dir/name; all stop at the end of the test. It reports errors rather
// than failing t, so that members start concurrently.
func startMember(t *testing.T, dir, name string, kueueFlags ...string) (*fleetMember, error) {
	s, err := kubeapitest.StartOptions(filepath.Join(dir, name, "kubeapi"), kubeapitest.Options{Workloads: true})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	t.Cleanup(s.Stop)
	m := &fleetMember{name: name, srv: s}
	if m.rc, err = s.RESTConfig(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.cs, m.dyn = kubernetes.NewForConfigOrDie(m.rc), dynamic.NewForConfigOrDie(m.rc)
	k, err := kubeapitest.StartKueue(s, filepath.Join(dir, name, "kueue"), kueueFlags...)
	if err != nil {
		return nil, fmt.Errorf("start Kueue on %s: %w", name, err)
	}
	t.Cleanup(k.Stop)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go kubeapitest.PlayKubelet(ctx, m.rc)
	return m, nil
}

// startFleet starts, at once, a fleet of three harness API servers under a
// temporary directory named after prefix (kept, with its logs, when the
// test fails): the manager hub, whose Kueue runs MultiKueue, and the
// workers east and west, each with the node node(name) and the Secret
// NAME-kubeconfig in kueue-system on hub holding the worker's kubeconfig
// (admin, inline certificates), which MultiKueue reaches it with.
func startFleet(t *testing.T, prefix string, node func(worker string) kubeapitest.GPUNode) (hub, east, west *fleetMember) {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs kept in %s (<cluster>/kubeapi/harness.log, <cluster>/kueue/kueue.log)", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	members := make([]*fleetMember, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, name := range []string{"hub", "east", "west"} {
		var flags []string
		if name == "hub" {
			flags = []string{"--multikueue"}
		}
		wg.Go(func() { members[i], errs[i] = startMember(t, dir, name, flags...) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	hub, east, west = members[0], members[1], members[2]
	for _, w := range []*fleetMember{east, west} {
		createNodesOn(t, w, node(w.name))
		kc, err := os.ReadFile(w.srv.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.name + "-kubeconfig", Namespace: "kueue-system"}, Data: map[string][]byte{"kubeconfig": kc}}
		if _, err := hub.cs.CoreV1().Secrets("kueue-system").Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return hub, east, west
}

// TestMultiKueueDispatch: three harness API servers, the real Kueue on
// each (the manager's with MultiKueue), the workers' objects applied by
// gpuform's pipeline and the manager's compiled objects applied with
// strict field validation. Tenant train's Job submitted to the manager
// runs on the worker with room in its quota (east), not on the one whose
// quota a Job of its own fills (west), and never on the manager; a second
// Job beyond the quota of both workers waits on both, and runs on west
// once west's quota is free. The manager has no pool: its ClusterQueue
// holds the sum of the workers' quotas over h100's ResourceFlavor.
func TestMultiKueueDispatch(t *testing.T) {
	hub, east, west := startFleet(t, "outcome-multikueue-", func(w string) kubeapitest.GPUNode {
		return gpuNode(w+"-h100", "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "fleet-h100"}, map[string]string{"nvidia.com/gpu": "1"})
	})
	ctx := context.Background()
	for _, w := range []*fleetMember{east, west} {
		applyOn(t, w.rc, fleetSource, "")
	}
	applyManager(t, hub, fleetManagerSource)

	for _, name := range []string{"east", "west"} {
		eventually(t, "MultiKueueCluster "+name+" active", conditionTrue(hub, multiKueueClusterGVR, "", name, "Active"))
	}
	eventually(t, "AdmissionCheck train active", conditionTrue(hub, admissionCheckGVR, "", "train", "Active"))
	eventually(t, "ClusterQueue train active on the manager", conditionTrue(hub, clusterQueueGVR, "", "train", "Active"))
	if got := managerGPUQuota(t, hub, "train", "h100"); got != "2" {
		t.Fatalf("the manager's ClusterQueue train has %q nvidia.com/gpu on h100, want 2 (east's 1 plus west's 1)", got)
	}

	// west's quota is taken by a Job submitted there.
	submitOn(t, west, job("train", "filler", "", map[string]string{"nvidia.com/gpu": "1"}))
	eventually(t, "filler runs on west", runs(west, "train", "filler"))

	submitOn(t, hub, job("train", "first", "", map[string]string{"nvidia.com/gpu": "1"}))
	eventually(t, "first runs on east", runs(east, "train", "first"))
	eventually(t, "first admitted on the manager", workloadIs(hub, "train", "first", "Admitted"))
	j, err := hub.cs.BatchV1().Jobs("train").Get(ctx, "first", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if by := deref(j.Spec.ManagedBy); by != "kueue.x-k8s.io/multikueue" {
		t.Errorf("the manager's Job first is managed by %q, want kueue.x-k8s.io/multikueue", by)
	}
	for _, m := range []*fleetMember{hub, west} {
		if pods := podsOf(t, m, "train", "first"); len(pods) > 0 {
			t.Errorf("first has %d pods on %s", len(pods), m.name)
		}
	}

	// Beyond the quota of both workers: the copies wait on each.
	submitOn(t, hub, job("train", "second", "", map[string]string{"nvidia.com/gpu": "1"}))
	for _, w := range []*fleetMember{east, west} {
		eventually(t, "second dispatched to "+w.name, workloadIs(w, "train", "second", "!QuotaReserved"))
	}
	consistently(t, "second waits on both workers", 10*time.Second, func() (bool, string) {
		for _, m := range []*fleetMember{hub, east, west} {
			if pods := podsOf(t, m, "train", "second"); len(pods) > 0 {
				return false, fmt.Sprintf("%d pods of second on %s", len(pods), m.name)
			}
		}
		if ok, seen := workloadIs(hub, "train", "second", "Admitted")(); ok {
			return false, "admitted on the manager: " + seen
		}
		return true, ""
	})

	// west's quota frees: second runs there.
	deleteJob(t, west, "train", "filler")
	eventually(t, "second runs on west", runs(west, "train", "second"))
	if pods := podsOf(t, east, "train", "second"); len(pods) > 0 {
		t.Errorf("second has %d pods on east too", len(pods))
	}
}

var (
	multiKueueClusterGVR = schema.GroupVersionResource{Group: kinds.GroupKueue, Version: "v1beta2", Resource: "multikueueclusters"}
	admissionCheckGVR    = schema.GroupVersionResource{Group: kinds.GroupKueue, Version: "v1beta2", Resource: "admissionchecks"}
)

// managerGPUQuota is the nominal quota of nvidia.com/gpu in flavor of
// ClusterQueue name on m, as the API server holds it; "" when none.
func managerGPUQuota(t *testing.T, m *fleetMember, name, flavor string) string {
	t.Helper()
	cq, err := m.dyn.Resource(clusterQueueGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			fm := f.(map[string]any)
			if fm["name"] != flavor {
				continue
			}
			rs, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, r := range rs {
				if rm := r.(map[string]any); rm["name"] == "nvidia.com/gpu" {
					q, _ := rm["nominalQuota"].(string)
					return q
				}
			}
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// applyManager loads fleet src as the configuration of its member hub,
// the manager, validates and compiles it, and server-side applies every
// object in the registry's apply order with strict field validation, as
// gpuform's apply does.
func applyManager(t *testing.T, hub *fleetMember, src string) {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{Cluster: "hub"})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatalf("validate: %s", diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := kinds.Builtin()
	objs := slices.Clone(d.Objects)
	slices.SortStableFunc(objs, func(a, b *engine.Object) int {
		return reg.Rank(a.Object.GroupVersionKind().GroupKind()) - reg.Rank(b.Object.GroupVersionKind().GroupKind())
	})
	force := true
	opts := metav1.PatchOptions{FieldManager: engine.FieldManager, Force: &force, FieldValidation: metav1.FieldValidationStrict}
	for _, o := range objs {
		e, ok := reg.Lookup(o.Object.GroupVersionKind().GroupKind())
		if !ok {
			t.Fatalf("%s is not in the registry", o.Object.GetKind())
		}
		data, err := json.Marshal(o.Object.Object)
		if err != nil {
			t.Fatal(err)
		}
		ri := hub.dyn.Resource(e.GroupVersionResource())
		if ns := o.Object.GetNamespace(); ns != "" {
			_, err = ri.Namespace(ns).Patch(context.Background(), o.Object.GetName(), types.ApplyPatchType, data, opts)
		} else {
			_, err = ri.Patch(context.Background(), o.Object.GetName(), types.ApplyPatchType, data, opts)
		}
		if err != nil {
			t.Fatalf("apply %s %s/%s on the manager: %v", o.Object.GetKind(), o.Object.GetNamespace(), o.Object.GetName(), err)
		}
	}
}

// applyOn applies src on the cluster of rc with gpuform's pipeline, as
// `gpuform apply --auto-approve` does (with member set, as the fleet's
// apply does for that member: the configuration loaded for it), and fails
// the test unless every change applied.
func applyOn(t *testing.T, rc *rest.Config, src, member string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := kube.NewForConfig(rest.CopyConfig(rc), "kubeapi", kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := stack.New(stack.Dir(dir), stack.Using(kube.StackCluster(client)), stack.Options{Load: config.Options{Cluster: member}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := st.Apply(ctx, stack.ApplyOptions{Safety: engine.SafetyOptions{MaxDeletes: engine.DefaultMaxDeletes}})
	if err != nil {
		t.Fatalf("gpuform apply: %v", err)
	}
	if !res.OK() {
		var failed []string
		for _, r := range res.Report.Results {
			if r.Err != nil {
				failed = append(failed, fmt.Sprintf("%s %s: %v", r.Change.Address, r.Change.Key, r.Err))
			}
		}
		t.Fatalf("gpuform apply did not apply everything: %s", strings.Join(failed, "; "))
	}
}

// createNodesOn creates nodes on m and waits until they are schedulable.
func createNodesOn(t *testing.T, m *fleetMember, nodes ...kubeapitest.GPUNode) {
	t.Helper()
	if err := kubeapitest.CreateNodes(context.Background(), m.rc, nodes...); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		eventually(t, "node "+n.Name+" schedulable", func() (bool, string) {
			node, err := m.cs.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(node.Spec.Taints) == 0, fmt.Sprint(node.Spec.Taints)
		})
	}
}

func submitOn(t *testing.T, m *fleetMember, jobs ...*batchv1.Job) {
	t.Helper()
	for _, j := range jobs {
		if _, err := m.cs.BatchV1().Jobs(j.Namespace).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Job %s/%s on %s: %v", j.Namespace, j.Name, m.name, err)
		}
	}
}

// podsOf returns Job name's pods in namespace ns of m.
func podsOf(t *testing.T, m *fleetMember, ns, name string) []corev1.Pod {
	t.Helper()
	pods, err := m.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// runs holds once Job name has a pod bound to a node of m.
func runs(m *fleetMember, ns, name string) func() (bool, string) {
	return func() (bool, string) {
		pods, err := m.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				return true, ""
			}
			seen = append(seen, p.Name+" "+string(p.Status.Phase))
		}
		return false, fmt.Sprintf("pods on %s: %v", m.name, seen)
	}
}

// workloadIs holds once m has a workload of Job name ("job-NAME-...") with
// condition cond True, or with "!cond", not True.
func workloadIs(m *fleetMember, ns, name, cond string) func() (bool, string) {
	want := "True"
	if c, ok := strings.CutPrefix(cond, "!"); ok {
		cond, want = c, ""
	}
	return func() (bool, string) {
		list, err := m.dyn.Resource(workloadGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, w := range list.Items {
			if !strings.HasPrefix(w.GetName(), "job-"+name+"-") {
				continue
			}
			status := condition(&w, cond)
			if (want == "True") == (status == "True") {
				return true, ""
			}
			seen = append(seen, w.GetName()+" "+cond+"="+status)
		}
		return false, fmt.Sprintf("workloads on %s: %v", m.name, seen)
	}
}

// conditionTrue holds once the object of gvr has condition cond True.
func conditionTrue(m *fleetMember, gvr schema.GroupVersionResource, ns, name, cond string) func() (bool, string) {
	return func() (bool, string) {
		u, err := m.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return condition(u, cond) == "True", fmt.Sprint(conds)
	}
}

// condition is the status of condition typ of u, "" when it has none.
func condition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
