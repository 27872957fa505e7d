package outcome

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// The harness of the package, started by TestMain.
var (
	srv     *kubeapitest.Server
	restCfg *rest.Config
	cs      *kubernetes.Clientset
	dyn     *dynamic.DynamicClient
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run starts the API server with kube-scheduler and the Job controller,
// Kueue, the stand-ins for kubelets, mig-manager and the agent, runs the
// tests and stops everything. A missing harness fails the package.
func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "outcome-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if srv, err = kubeapitest.StartOptions(filepath.Join(dir, "kubeapi"), kubeapitest.Options{Workloads: true}); err != nil {
		fmt.Fprintln(os.Stderr, "outcome:", err)
		return 1
	}
	defer srv.Stop()
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "outcome: prepare the cluster:", err)
		return 1
	}
	kueue, err := kubeapitest.StartKueue(srv, filepath.Join(dir, "kueue"), draKueueMappings()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "outcome:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go kubeapitest.PlayKubelet(ctx, restCfg)
	go kubeapitest.PlayMigManager(ctx, restCfg)
	go playAgent(ctx)
	code := m.Run()
	cancel()
	kueue.Stop()
	if code == 0 {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "outcome: logs kept in %s (kubeapi/apiserver.log, kueue/kueue.log)\n", dir)
	}
	return code
}

// setup makes the clients and installs what the stacks need besides
// Kueue: the KServe, Volcano and GPU Operator CRDs and a ClusterPolicy.
func setup() error {
	var err error
	if restCfg, err = srv.RESTConfig(); err != nil {
		return err
	}
	if cs, err = kubernetes.NewForConfig(restCfg); err != nil {
		return err
	}
	if dyn, err = dynamic.NewForConfig(restCfg); err != nil {
		return err
	}
	ctx := context.Background()
	if err := kubeapitest.ApplyCRDs(ctx, restCfg, "kserve.yaml", "volcano.yaml", "gpu-operator.yaml"); err != nil {
		return err
	}
	if err := kubeapitest.CreateNamespaces(ctx, restCfg, "gpu-operator"); err != nil {
		return err
	}
	return kubeapitest.CreateClusterPolicy(ctx, restCfg, "cluster-policy")
}

// playAgent stands in for the gpuform agent until ctx ends: a node whose
// layout annotation waits (state pending) gets state success.
func playAgent(ctx context.Context) {
	for ctx.Err() == nil {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range nodes.Items {
				n := &nodes.Items[i]
				if n.Annotations[agentv1.AnnotMIGState] != agentv1.StatePending {
					continue
				}
				n.Annotations[agentv1.AnnotMIGState] = agentv1.StateSuccess
				_, _ = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "gpuform-agent"})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// apply applies the configuration src (one main.hcl) with gpuform's
// pipeline, as `gpuform apply --auto-approve` does, and fails the test
// unless every change applied.
func apply(t *testing.T, src string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := kube.NewForConfig(rest.CopyConfig(restCfg), "kubeapi", kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := stack.New(stack.Dir(dir), stack.Using(kube.StackCluster(client)), stack.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := st.Apply(ctx, stack.ApplyOptions{
		Safety: engine.SafetyOptions{MaxDeletes: engine.DefaultMaxDeletes}, // the CLI's default
		Engine: engine.ApplyOptions{MIGTimeout: time.Minute},
	})
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
		t.Fatalf("gpuform apply did not apply everything (stopped: %v): %s", res.Stopped, strings.Join(failed, "; "))
	}
}

// gpuNode is a simulated GPU node: GPU Feature Discovery labels for
// gpuform's capacity check, the device plugin's resources (MIG strategy
// mixed) and room for pods.
func gpuNode(name, product string, labels, gpus map[string]string) kubeapitest.GPUNode {
	l := map[string]string{"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": "1"}
	for k, v := range labels {
		l[k] = v
	}
	c := map[string]string{"cpu": "32", "memory": "128Gi", "pods": "110"}
	for k, v := range gpus {
		c[k] = v
	}
	return kubeapitest.GPUNode{Name: name, Labels: l, Capacity: c}
}

// createNodes creates nodes and waits until the kubelet stand-in made
// them schedulable.
func createNodes(t *testing.T, nodes ...kubeapitest.GPUNode) {
	t.Helper()
	ctx := context.Background()
	if err := kubeapitest.CreateNodes(ctx, restCfg, nodes...); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		eventually(t, "node "+n.Name+" schedulable", func() (bool, string) {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(node.Spec.Taints) == 0, fmt.Sprint(node.Spec.Taints)
		})
	}
}

// eventually polls cond every 200ms for up to 90s; cond says whether it
// holds and what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	seen := ""
	for time.Now().Before(deadline) {
		var ok bool
		if ok, seen = cond(); ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not after 90s; last seen: %s", what, seen)
}

// consistently checks that cond holds for d, every 200ms.
func consistently(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if ok, seen := cond(); !ok {
			t.Fatalf("%s: stopped holding: %s", what, seen)
		}
	}
}

// job is a one-pod Job submitted to the tenant's LocalQueue "default"
// (gpuform's), with a Kueue priority class when priority is set; its pod
// requests res plus a little cpu and memory, as every real pod does.
func job(ns, name, priority string, res map[string]string) *batchv1.Job {
	labels := map[string]string{"kueue.x-k8s.io/queue-name": engine.LocalQueueName}
	if priority != "" {
		labels["kueue.x-k8s.io/priority-class"] = priority
	}
	one := int32(1)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Parallelism: &one, Completions: &one,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{container(res)},
			}},
		},
	}
}

// container asks for res (requests = limits) plus 100m cpu and 128Mi.
func container(res map[string]string) corev1.Container {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	for k, v := range res {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return corev1.Container{Name: "main", Image: "registry.invalid/workload:1", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}
}

// submit creates the Jobs.
func submit(t *testing.T, jobs ...*batchv1.Job) {
	t.Helper()
	for _, j := range jobs {
		if _, err := cs.BatchV1().Jobs(j.Namespace).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Job %s/%s: %v", j.Namespace, j.Name, err)
		}
	}
}

var workloadGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// workloadState is what Kueue says of one workload.
type workloadState struct {
	// Owner is the Job or pod the workload is for.
	Owner string
	// Conditions by type: status and reason.
	Conditions map[string][2]string
	// Message of QuotaReserved (why it waits).
	Message string
}

func (w workloadState) is(cond string) bool { return w.Conditions[cond][0] == "True" }

// admitted reports whether Kueue admitted the workload and it was not
// evicted since.
func (w workloadState) admitted() bool { return w.is("Admitted") && !w.is("Evicted") }

func (w workloadState) String() string {
	return fmt.Sprintf("%s%v %q", w.Owner, w.Conditions, w.Message)
}

// workloads returns Kueue's workloads of namespace ns by owner name.
func workloads(t *testing.T, ns string) map[string]workloadState {
	t.Helper()
	list, err := dyn.Resource(workloadGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list workloads in %s: %v", ns, err)
	}
	out := map[string]workloadState{}
	for _, w := range list.Items {
		owners := w.GetOwnerReferences()
		if len(owners) == 0 {
			continue
		}
		st := workloadState{Owner: owners[0].Name, Conditions: map[string][2]string{}}
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			typ, _ := m["type"].(string)
			status, _ := m["status"].(string)
			reason, _ := m["reason"].(string)
			st.Conditions[typ] = [2]string{status, reason}
			if typ == "QuotaReserved" {
				st.Message, _ = m["message"].(string)
			}
		}
		out[st.Owner] = st
	}
	return out
}

// count returns how many of the workloads satisfy f, and them all as text.
func count(ws map[string]workloadState, f func(workloadState) bool) (int, string) {
	n := 0
	var all []string
	for _, w := range ws {
		if f(w) {
			n++
		}
		all = append(all, w.String())
	}
	sort.Strings(all)
	return n, strings.Join(all, "; ")
}

// jobPods returns the pods of namespace ns that belong to Job name.
func jobPods(t *testing.T, ns, name string) []corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// get reads one object of gvr.
func get(t *testing.T, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}
