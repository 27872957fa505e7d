package outcome

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// isolationConfig: pool dedicated's node carries a taint that only tenant
// payments (quota there, pods in gVisor) tolerates; tenant others has
// quota on pool open. Model fraud of payments runs on the tainted pool.
// The first argument is the scheduler, the second the runtime_class.
const isolationConfig = `
gpuform {
  stack     = "isolation-%[1]s"
  scheduler = "%[1]s"
}

pool "dedicated-%[1]s" {
  gpu           = "NVIDIA-H100-80GB-HBM3"
  node_selector = { "outcome.gpuform.dev/group" = "dedicated-%[1]s" }
  taint {
    key   = "outcome.gpuform.dev/dedicated"
    value = "payments"
  }
}

pool "open-%[1]s" {
  gpu           = "NVIDIA-H100-80GB-HBM3"
  node_selector = { "outcome.gpuform.dev/group" = "open-%[1]s" }
}

tenant "payments" {
  namespace     = "iso-payments-%[1]s"
  runtime_class = %[2]s
  protect       = false
  quota "dedicated-%[1]s" {
    gpus = 2
  }
}

tenant "others" {
  namespace = "iso-others-%[1]s"
  admins    = ["user:others-admin"]
  protect   = false
  quota "open-%[1]s" {
    gpus = 2
  }
}

model "fraud" {
  tenant      = tenant.payments
  pool        = pool.dedicated-%[1]s
  gpus        = 1
  format      = "huggingface"
  storage_uri = "s3://models/fraud"
}
`

// dedicatedTaint is the taint of pool dedicated's node, set when the node
// is created (gpuform declares it, never sets it).
var dedicatedTaint = corev1.Taint{Key: "outcome.gpuform.dev/dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}

// isolationCluster creates the RuntimeClasses named (handler runsc) and
// the two pools' nodes of scheduler sched's stack, the dedicated one
// tainted, and waits until the kubelet stand-in has lifted their not-ready
// taints.
func isolationCluster(t *testing.T, sched string, runtimeClasses ...string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range runtimeClasses {
		rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: "runsc"}
		if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	dedicated := gpuNode("iso-dedicated-"+sched, "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "dedicated-" + sched, "nvidia.com/gpu.count": "2"}, map[string]string{"nvidia.com/gpu": "2"})
	dedicated.Taints = []corev1.Taint{dedicatedTaint}
	open := gpuNode("iso-open-"+sched, "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "open-" + sched, "nvidia.com/gpu.count": "2"}, map[string]string{"nvidia.com/gpu": "2"})
	if err := kubeapitest.CreateNodes(ctx, restCfg, dedicated, open); err != nil {
		t.Fatal(err)
	}
	for _, n := range []kubeapitest.GPUNode{dedicated, open} {
		eventually(t, "node "+n.Name+" ready with only its own taints", func() (bool, string) {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(node.Spec.Taints) == len(n.Taints), fmt.Sprint(node.Spec.Taints)
		})
	}
}

// TestTaintedPoolOnlyForItsTenant: with kube-scheduler (scheduler none)
// the model of the tenant with quota on a tainted pool carries the
// toleration and is bound to the pool's node, and another tenant's pod
// aimed at the pool, with the toleration, is refused at admission. Fails without taint blocks
// (the node's taint keeps the model Pending). Plan warns of a node that
// lacks a declared taint, and only then.
func TestTaintedPoolOnlyForItsTenant(t *testing.T) {
	isolationCluster(t, "none", "gvisor")
	cfg := fmt.Sprintf(isolationConfig, "none", `"gvisor"`)
	apply(t, cfg)
	// The node carries the declared taint: no warning. Declared with
	// another value, it lacks it.
	for _, w := range planWarnings(t, cfg) {
		if strings.Contains(w, "lacks taint") {
			t.Errorf("plan warns of the tainted node: %s", w)
		}
	}
	other := planWarnings(t, strings.Replace(cfg, `value = "payments"`, `value = "risk"`, 1))
	want := "Node iso-dedicated-none of pool.dedicated-none lacks taint outcome.gpuform.dev/dedicated=risk:NoSchedule"
	if !slices.ContainsFunc(other, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("plan warnings %q, want one starting %q", other, want)
	}
	modelOnTaintedNode(t, "none")
	// Another tenant's pod aimed at the pool, even with the pool's
	// toleration, is refused: that tenant has no quota there. Its admin
	// tries (impersonation), with the access gpuform granted once the
	// policies were enforced in its namespace.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "intruder", Namespace: "iso-others-none"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{engine.LabelPool: "dedicated-none"},
			Tolerations:  []corev1.Toleration{{Key: dedicatedTaint.Key, Operator: corev1.TolerationOpEqual, Value: dedicatedTaint.Value, Effect: dedicatedTaint.Effect}},
			Containers:   []corev1.Container{container(map[string]string{"nvidia.com/gpu": "1"})},
		},
	}
	_, err := asTenant(t, "others-admin").CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(fmt.Sprint(err), "nodeSelector gpuform.dev/pool naming a pool the tenant has quota on") {
		t.Errorf("the other tenant's pod on the tainted pool: %v, want refused by the GPU-pools policy", err)
	}
}

// TestTaintedPoolUnderKueue: with Kueue, the model of the tenant with
// quota on the tainted pool is admitted and bound to the pool's node; the
// tenant's batch Job, which names no toleration, is admitted on the pool's
// ResourceFlavor (whose nodeTaints it tolerates through the flavor's
// tolerations, which Kueue adds to its pod) and bound there too; another
// tenant's pod aimed at the node is never admitted (its ClusterQueue has
// no quota on the pool's flavor) nor bound. Fails without the
// ResourceFlavor's nodeTaints and tolerations (the Job's pod stays
// Pending on the taint).
func TestTaintedPoolUnderKueue(t *testing.T) {
	isolationCluster(t, "kueue", "gvisor")
	apply(t, fmt.Sprintf(isolationConfig, "kueue", `"gvisor"`))
	model := modelOnTaintedNode(t, "kueue")
	ns := model.Namespace
	batch := job(ns, "batch", "", map[string]string{"nvidia.com/gpu": "1"})
	gvisor := "gvisor"
	batch.Spec.Template.Spec.RuntimeClassName = &gvisor
	submit(t, batch)
	eventually(t, "the Job's pod, without a toleration of its own, bound to the tainted node", func() (bool, string) {
		pods := jobPods(t, ns, "batch")
		if len(pods) != 1 {
			return false, fmt.Sprintf("%d pods; workloads %v", len(pods), workloads(t, ns))
		}
		return pods[0].Spec.NodeName == "iso-dedicated-kueue", fmt.Sprintf("on %q, tolerations %v", pods[0].Spec.NodeName, pods[0].Spec.Tolerations)
	})
	other := intruder(t, "kueue")
	eventually(t, "Kueue holds the other tenant's pod", func() (bool, string) {
		w, ok := workloads(t, other.Namespace)[other.Name]
		return ok && !w.admitted(), fmt.Sprint(w)
	})
	stayUnbound(t, other)
	if w := workloads(t, other.Namespace)[other.Name]; w.admitted() {
		t.Errorf("Kueue admitted the other tenant's pod: %v", w)
	}
}

// modelOnTaintedNode creates the pod KServe makes of model fraud of
// scheduler sched's stack and waits until it is bound to the tainted node.
func modelOnTaintedNode(t *testing.T, sched string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	ns := "iso-payments-" + sched
	model := kservePod(t, ns, "fraud")
	if len(model.Spec.Tolerations) != 1 || model.Spec.RuntimeClassName == nil || *model.Spec.RuntimeClassName != "gvisor" {
		t.Fatalf("the model's pod has tolerations %v, runtimeClassName %v; want the pool's toleration and gvisor", model.Spec.Tolerations, model.Spec.RuntimeClassName)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, model, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the model's pod: %v", err)
	}
	eventually(t, "the model's pod bound to the tainted node", func() (bool, string) {
		m, err := cs.CoreV1().Pods(ns).Get(ctx, model.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return m.Spec.NodeName == "iso-dedicated-"+sched, fmt.Sprintf("on %q, conditions %v", m.Spec.NodeName, m.Status.Conditions)
	})
	return model
}

// intruder creates a pod of tenant others of scheduler sched's stack that
// asks for a GPU on the dedicated pool's node (by its pool label) without
// the pool's toleration.
func intruder(t *testing.T, sched string) *corev1.Pod {
	t.Helper()
	other := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "intruder", Namespace: "iso-others-" + sched},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{engine.LabelPool: "dedicated-" + sched},
			Containers:   []corev1.Container{container(map[string]string{"nvidia.com/gpu": "1"})},
		},
	}
	if _, err := cs.CoreV1().Pods(other.Namespace).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the other tenant's pod: %v", err)
	}
	return other
}

// stayUnbound checks that pod p stays unbound for 3 seconds.
func stayUnbound(t *testing.T, p *corev1.Pod) {
	t.Helper()
	consistently(t, "the other tenant's pod stays Pending", 3*time.Second, func() (bool, string) {
		cur, err := cs.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Spec.NodeName == "", cur.Spec.NodeName
	})
}

// TestSandboxedTenantAdmission: on the real API server, the stack's
// runtime-class policy denies a pod in the sandboxed tenant's namespace
// without an allowed runtimeClassName, with the policy's message, and
// admits one with it; other tenants' namespaces are left alone. Plan warns
// of a runtime_class that names no RuntimeClass of the cluster, and only
// of it. Fails without issue 17's runtime_class.
func TestSandboxedTenantAdmission(t *testing.T) {
	isolationCluster(t, "none", "gvisor", "runc")
	apply(t, fmt.Sprintf(isolationConfig, "none", `"gvisor"`))
	ctx := context.Background()
	tryPod := func(ns, runtimeClass string) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}},
		}
		if runtimeClass != "" {
			pod.Spec.RuntimeClassName = &runtimeClass
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	// The policy reaches the API server's admission chain asynchronously.
	var denied error
	eventually(t, "a pod without runtimeClassName denied", func() (bool, string) {
		denied = tryPod("iso-payments-none", "")
		return denied != nil, fmt.Sprint(denied)
	})
	want := "pods in namespace iso-payments-none must set runtimeClassName to gvisor (gpuform tenant.payments)"
	if !apierrors.IsInvalid(denied) && !apierrors.IsForbidden(denied) || !strings.Contains(denied.Error(), want) {
		t.Errorf("denial = %q, want it to contain %q", denied, want)
	}
	for _, tt := range []struct {
		ns, runtimeClass string
		allowed          bool
	}{
		{"iso-payments-none", "runc", false},
		{"iso-payments-none", "gvisor", true},
		{"iso-others-none", "", true},
		{"iso-others-none", "runc", true},
	} {
		err := tryPod(tt.ns, tt.runtimeClass)
		if tt.allowed != (err == nil) {
			t.Errorf("pod in %s with runtimeClassName %q: %v, want allowed %v", tt.ns, tt.runtimeClass, err, tt.allowed)
		}
	}

	// Plan against the cluster (RuntimeClasses gvisor and runc): kata is
	// missing.
	warnings := planWarnings(t, fmt.Sprintf(isolationConfig, "none", `["gvisor", "kata"]`))
	var rc []string
	for _, w := range warnings {
		if strings.Contains(w, "RuntimeClass") {
			rc = append(rc, w)
		}
	}
	if len(rc) != 1 || !strings.HasPrefix(rc[0], "RuntimeClass kata not found: tenant.payments's pods") {
		t.Errorf("RuntimeClass warnings %q, want one, of kata", rc)
	}
}

// planWarnings plans src (one main.hcl) against the cluster and returns
// the plan's warnings.
func planWarnings(t *testing.T, src string) []string {
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := st.Plan(ctx, stack.PlanOptions{})
	if err != nil {
		t.Fatalf("gpuform plan: %v", err)
	}
	return engine.WarningTexts(res.Plan.Warnings)
}
