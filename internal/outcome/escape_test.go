package outcome

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// The tenant-escape suite: after gpuform applied a three-tenant stack, each
// tenant's admin, acting with only the namespace admin role gpuform's
// RoleBinding grants (impersonated), tries to take what the configuration
// does not give it. Tenant small has 2 MIG slices; tenant owner owns a
// tainted pool of 8 whole GPUs and has default priority realtime; tenant
// bare has neither quota nor priorities.
const escapeConfig = `
gpuform {
  stack       = "escape-%[1]s"
  scheduler   = "%[1]s"
  mig_backend = "agent"
}

priority "realtime-%[1]s" {
  value      = 1000
  preemption = "PreemptLowerPriority"
}

priority "batch-%[1]s" {
  value      = 100
  preemption = "Never"
}

mig_layout "sevenths" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 7 }
}

pool "mig-%[1]s" {
  gpu           = "A100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "escape-mig-%[1]s" }
  mig_layout    = mig_layout.sevenths
}

pool "whole-%[1]s" {
  gpu           = "NVIDIA-H100-80GB-HBM3"
  node_selector = { "outcome.gpuform.dev/group" = "escape-whole-%[1]s" }
  taint {
    key   = "outcome.gpuform.dev/escape"
    value = "owner"
  }
}

tenant "small" {
  namespace  = "esc-small-%[1]s"
  admins     = ["user:small-admin"]
  priorities = [priority.batch-%[1]s]
  protect    = false
  quota "mig-%[1]s" {
    slices = { "1g.10gb" = 2 }
  }
}

tenant "owner" {
  namespace        = "esc-owner-%[1]s"
  admins           = ["user:owner-admin"]
  priorities       = [priority.realtime-%[1]s, priority.batch-%[1]s]
  default_priority = priority.realtime-%[1]s
  protect          = false
  quota "whole-%[1]s" {
    gpus = 8
  }
}

tenant "bare" {
  namespace = "esc-bare-%[1]s"
  admins    = ["user:bare-admin"]
  protect   = false
}
`

// escapeStack creates the nodes of scheduler sched's escape stack (two
// A100s with 7 slices each; eight H100s behind the owner's taint) and
// applies it.
func escapeStack(t *testing.T, sched string) {
	t.Helper()
	mig := gpuNode("esc-mig-"+sched, "NVIDIA-A100-SXM4-80GB", map[string]string{"outcome.gpuform.dev/group": "escape-mig-" + sched, "nvidia.com/mig.capable": "true", "nvidia.com/gpu.count": "2"}, map[string]string{slice: "14"})
	whole := gpuNode("esc-whole-"+sched, "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "escape-whole-" + sched, "nvidia.com/gpu.count": "8"}, map[string]string{"nvidia.com/gpu": "8"})
	whole.Taints = []corev1.Taint{{Key: "outcome.gpuform.dev/escape", Value: "owner", Effect: corev1.TaintEffectNoSchedule}}
	ctx := context.Background()
	if err := kubeapitest.CreateNodes(ctx, restCfg, whole, mig); err != nil {
		t.Fatal(err)
	}
	for _, n := range []kubeapitest.GPUNode{whole, mig} {
		eventually(t, "node "+n.Name+" ready with only its own taints", func() (bool, string) {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(node.Spec.Taints) == len(n.Taints), fmt.Sprint(node.Spec.Taints)
		})
	}
	apply(t, fmt.Sprintf(escapeConfig, sched))
}

// asTenant is a client acting as user, who holds only what gpuform's
// RoleBindings grant (impersonation: the harness's admin may impersonate).
func asTenant(t *testing.T, user string) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gpuPod is a pod asking for res, aimed at pool (nodeSelector; none when
// empty) with the escape stack's whole-GPU toleration and priority class
// priority (none when empty).
func gpuPod(ns, name, pool, priority string, res map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			Containers:        []corev1.Container{container(res)},
			Tolerations:       []corev1.Toleration{{Key: "outcome.gpuform.dev/escape", Operator: corev1.TolerationOpEqual, Value: "owner", Effect: corev1.TaintEffectNoSchedule}},
			PriorityClassName: priority,
		},
	}
	if pool != "" {
		p.Spec.NodeSelector = map[string]string{engine.LabelPool: pool}
	}
	return p
}

// refused fails unless err is the API server's refusal (forbidden or
// invalid) and its message contains want.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: admitted, want refused (%q)", what, want)
	case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
		t.Errorf("%s: %v, want a refusal by admission", what, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: refused with %q, want a message containing %q", what, err, want)
	}
}

// TestTenantEscapes runs the suite under scheduler none and kueue.
func TestTenantEscapes(t *testing.T) {
	for _, sched := range []string{"none", "kueue"} {
		t.Run(sched, func(t *testing.T) { tenantEscapes(t, sched) })
	}
}

func tenantEscapes(t *testing.T, sched string) {
	escapeStack(t, sched)
	ctx := context.Background()
	small, bare, owner := "esc-small-"+sched, "esc-bare-"+sched, "esc-owner-"+sched
	smallC, bareC, ownerC := asTenant(t, "small-admin"), asTenant(t, "bare-admin"), asTenant(t, "owner-admin")
	create := func(c *kubernetes.Clientset, p *corev1.Pod) error {
		_, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		return err
	}
	// RBAC and the policies reach the API server's authorizer and
	// admission asynchronously: each tenant may first create a pod it is
	// allowed, then the first refusal is awaited; the rest must hold at once.
	for _, c := range []struct {
		client *kubernetes.Clientset
		ns     string
	}{{smallC, small}, {bareC, bare}, {ownerC, owner}} {
		eventually(t, "the tenant's admin may create pods in "+c.ns, func() (bool, string) {
			_, err := c.client.CoreV1().Pods(c.ns).Create(ctx, gpuPod(c.ns, "rbac", "", "", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil, fmt.Sprint(err)
		})
	}
	// Wait at most 30 s for the policies (a dry run): without them the
	// attempts below show each escape.
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		_, err := bareC.CoreV1().Pods(bare).Create(ctx, gpuPod(bare, "probe", "", "system-node-critical", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			break
		}
	}

	// Another pool's GPUs: 8 whole GPUs of the owner's tainted pool, with
	// its toleration and node selector, by a tenant with 2 MIG slices.
	// Under Kueue the pod carries Kueue's gate (Kueue would choose the
	// pool), so the quota, which names nvidia.com/gpu with 0, refuses it.
	policy, quota := "may ask for nvidia.com/ resources only with nodeSelector gpuform.dev/pool", "exceeded quota: gpuform"
	if sched == "kueue" {
		policy = quota
	}
	refused(t, "small takes the owner's pool", create(smallC, gpuPod(small, "take-whole", "whole-"+sched, "", map[string]string{"nvidia.com/gpu": "8"})), policy)
	// The same without a node selector: any node with GPUs.
	refused(t, "small takes GPUs anywhere", create(smallC, gpuPod(small, "take-any", "", "", map[string]string{"nvidia.com/gpu": "1"})), policy)
	// A tenant without quota takes MIG slices on the pool.
	refused(t, "bare takes MIG slices", create(bareC, gpuPod(bare, "take-slices", "mig-"+sched, "", map[string]string{slice: "7"})), map[string]string{"none": "(none;", "kueue": quota}[sched])
	// Within the pool it has quota on, small gets no more than its quota.
	refused(t, "small over its quota", create(smallC, gpuPod(small, "over-quota", "mig-"+sched, "", map[string]string{slice: "3"})), quota)

	// System and foreign priorities.
	refused(t, "bare uses system-node-critical", create(bareC, gpuPod(bare, "sys-prio", "", "system-node-critical", nil)), "priority class system-node-critical is not among the priorities")
	refused(t, "small uses realtime", create(smallC, gpuPod(small, "rt-prio", "", "realtime-"+sched, nil)), "is not among the priorities of namespace "+small)
	if err := create(smallC, gpuPod(small, "batch-prio", "", "batch-"+sched, nil)); err != nil {
		t.Errorf("small's pod with its own priority batch: %v", err)
	}

	// Kueue's priority label, on a Job and on a pod.
	labelled := job(small, "rt-job", "realtime-"+sched, map[string]string{slice: "1"})
	labelled.Spec.Template.Spec.NodeSelector = map[string]string{engine.LabelPool: "mig-" + sched}
	_, err := smallC.BatchV1().Jobs(small).Create(ctx, labelled, metav1.CreateOptions{})
	refused(t, "small labels its Job realtime", err, "Kueue priority class realtime-"+sched+" is not among the priorities")

	// The default priority: the owner's pod and Job without one get
	// realtime (once the API server has the mutating policies, which no
	// probe can show apply: they deny nothing).
	eventually(t, "the default-priority policy in force", func() (bool, string) {
		p, err := ownerC.CoreV1().Pods(owner).Create(ctx, gpuPod(owner, "dry", "", "", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.PriorityClassName != "", "no class"
	})
	plain := gpuPod(owner, "plain", "", "", nil)
	got, err := ownerC.CoreV1().Pods(owner).Create(ctx, plain, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the owner's pod without a priority: %v", err)
	}
	if got.Spec.PriorityClassName != "realtime-"+sched || got.Spec.Priority == nil || *got.Spec.Priority != 1000 {
		t.Errorf("the owner's pod without a priority got class %q, priority %v; want realtime-%s, 1000", got.Spec.PriorityClassName, got.Spec.Priority, sched)
	}
	j := job(owner, "plain-job", "", map[string]string{"nvidia.com/gpu": "1"})
	j.Spec.Template.Spec.NodeSelector = map[string]string{engine.LabelPool: "whole-" + sched}
	j.Spec.Template.Spec.Tolerations = gpuPod("", "", "", "", nil).Spec.Tolerations
	gotJob, err := ownerC.BatchV1().Jobs(owner).Create(ctx, j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the owner's Job without a priority: %v", err)
	}
	if pc := gotJob.Spec.Template.Spec.PriorityClassName; pc != "realtime-"+sched {
		t.Errorf("the owner's Job without a priority got pod template class %q, want realtime-%s", pc, sched)
	}
	if sched == "kueue" {
		kueueEscapes(t, smallC, small, ownerC, owner)
	}
}

// kueueEscapes: Kueue's workload of the owner's Job runs at the default
// priority; small cannot lift Kueue's gate from its pod nor resume its
// suspended Job.
func kueueEscapes(t *testing.T, smallC *kubernetes.Clientset, small string, ownerC *kubernetes.Clientset, owner string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, "Kueue's workload of the owner's Job at priority 1000", func() (bool, string) {
		list, err := dyn.Resource(workloadGVR).Namespace(owner).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, w := range list.Items {
			if p, ok, _ := unstructured.NestedInt64(w.Object, "spec", "priority"); ok {
				return p == 1000, fmt.Sprintf("%s priority %d", w.GetName(), p)
			}
		}
		return false, fmt.Sprintf("%d workloads", len(list.Items))
	})

	gated, err := smallC.CoreV1().Pods(small).Create(ctx, gpuPod(small, "gated", "", "", map[string]string{slice: "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("small's pod for Kueue: %v", err)
	}
	if len(gated.Spec.SchedulingGates) == 0 {
		t.Fatalf("small's pod carries no Kueue gate: %v", gated.Spec)
	}
	_, err = smallC.CoreV1().Pods(small).Patch(ctx, "gated", types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`), metav1.PatchOptions{})
	refused(t, "small lifts Kueue's gate", err, "only Kueue lifts the scheduling gate")

	suspended := job(small, "suspended", "", map[string]string{slice: "5"})
	if _, err := smallC.BatchV1().Jobs(small).Create(ctx, suspended, metav1.CreateOptions{}); err != nil {
		t.Fatalf("small's Job: %v", err)
	}
	_, err = smallC.BatchV1().Jobs(small).Patch(ctx, "suspended", types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{})
	refused(t, "small resumes its Job", err, "only Kueue resumes a suspended Job")
}
