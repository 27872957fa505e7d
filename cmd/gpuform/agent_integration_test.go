//go:build linux && cgo

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/nvml"
)

// agentManifests are the agent's deployment example (the Helm chart's
// rendering, see charts/gpuform): its namespace, the DaemonSet with its
// service account, and its RBAC and admission policy.
var agentManifests = []string{
	filepath.Join("..", "..", "examples", "deploy", "namespace.yaml"),
	filepath.Join("..", "..", "examples", "deploy", "agent.yaml"),
	filepath.Join("..", "..", "examples", "deploy", "rbac", "gpuform-agent.yaml"),
}

// agentSA is the agent's service account as a user name.
const agentSA = "system:serviceaccount:gpuform-system:gpuform-agent"

// applyManifest applies objects from agentManifests with server-side apply,
// for real or as a dry run (dry-run=All), and returns the results.
func applyManifest(t *testing.T, dryRun bool, keep func(*unstructured.Unstructured) bool) []*unstructured.Unstructured {
	t.Helper()
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range agentManifests {
		o, err := kubeapitest.ReadYAML(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Namespaced objects, even dry-run, need their namespace.
	if err := kubeapitest.CreateNamespaces(ctx, cfg, "gpuform-system"); err != nil {
		t.Fatal(err)
	}
	opts := metav1.ApplyOptions{FieldManager: "agent-manifest-test", Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if keep != nil && !keep(o) {
			continue
		}
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		got, err := ri.Apply(ctx, o.GetName(), o, opts)
		if err != nil {
			t.Fatalf("apply %s %s (dry run %v): %v", gvk.Kind, o.GetName(), dryRun, err)
		}
		out = append(out, got)
	}
	return out
}

// Every object of examples/deploy/namespace.yaml, agent.yaml and
// rbac/gpuform-agent.yaml is
// valid: the API server
// accepts each in a server-side dry-run apply; and it says what the agent
// needs.
func TestAgentDeployManifest(t *testing.T) {
	objs := applyManifest(t, true, nil)
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		kinds[o.GetKind()] = o
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "DaemonSet"} {
		if kinds[k] == nil {
			t.Errorf("namespace.yaml, agent.yaml and rbac/gpuform-agent.yaml have no %s", k)
		}
	}
	rules, _, _ := unstructured.NestedSlice(kinds["ClusterRole"].Object, "rules")
	if b, _ := json.Marshal(rules); string(b) != `[{"apiGroups":[""],"resources":["nodes"],"verbs":["get","watch","patch"]}]` {
		t.Errorf("ClusterRole rules = %s, want get, watch and patch on nodes only", b)
	}
	ds := kinds["DaemonSet"]
	pod, _, _ := unstructured.NestedMap(ds.Object, "spec", "template", "spec")
	b, _ := json.Marshal(pod)
	var spec corev1.PodSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	c := spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	switch {
	case spec.NodeSelector["nvidia.com/gpu.present"] != "true":
		t.Errorf("nodeSelector = %v", spec.NodeSelector)
	case env["NODE_NAME"].ValueFrom == nil || env["NODE_NAME"].ValueFrom.FieldRef.FieldPath != "spec.nodeName":
		t.Errorf("NODE_NAME is not the downward API's spec.nodeName: %+v", env["NODE_NAME"])
	case spec.RuntimeClassName == nil || *spec.RuntimeClassName != "nvidia" || env["NVIDIA_VISIBLE_DEVICES"].Value != "all" || env["NVIDIA_DRIVER_CAPABILITIES"].Value != "utility":
		t.Errorf("the NVIDIA runtime does not give the container NVML: runtimeClassName %v, env %v", spec.RuntimeClassName, env)
	case c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged:
		t.Errorf("the container is not privileged: %+v", c.SecurityContext)
	case spec.ServiceAccountName != "gpuform-agent" || !slices.Equal(c.Args, []string{"agent"}):
		t.Errorf("service account %q, args %q", spec.ServiceAccountName, c.Args)
	case spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds < 30 || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero():
		t.Errorf("grace period %v, resources %+v", spec.TerminationGracePeriodSeconds, c.Resources)
	}
}

// agentKubeconfig writes a kubeconfig that acts as the agent's service
// account on node, as a pod's token would (impersonating the user, its
// groups and the node name Kubernetes puts in the token).
func agentKubeconfig(t *testing.T, node string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(srv.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = agentSA
		ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:gpuform-system", "system:authenticated"}
		ai.ImpersonateUserExtra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
	}
	path := filepath.Join(t.TempDir(), "agent-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runAgent runs `gpuform agent` in-process until the returned stop is
// called; stop returns the command's result.
func runAgent(t *testing.T, args ...string) (stderr *syncBuffer, stop func() result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	var stdout bytes.Buffer
	g := &globals{stdout: &stdout, stderr: stderr}
	cmd := newRoot(g)
	cmd.SetArgs(append([]string{"--no-color"}, args...))
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var once sync.Once
	var r result
	stop = func() result {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				r = toResult(stdout.String(), stderr.String(), err)
			case <-time.After(10 * time.Second):
				t.Errorf("gpuform agent did not stop within 10s of its context being cancelled")
				r = result{code: -1}
			}
		})
		return r
	}
	t.Cleanup(func() { stop() })
	return stderr, stop
}

// waitNode polls the node until cond holds, failing after timeout.
func waitNode(t *testing.T, cs *kubernetes.Clientset, name, what string, timeout time.Duration, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && cond(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for node %s: %s (last error %v, annotations %v)", name, what, err, annotationsOf(n))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func annotationsOf(n *corev1.Node) map[string]string {
	if n == nil {
		return nil
	}
	return n.Annotations
}

const agentE2EConfig = `gpuform {
  stack       = "agent-e2e"
  mig_backend = "agent"
}

priority "agente2e" {
  value = 100
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "agente2e" {
  gpu           = "A100-80GB"
  node_selector = { "gpuform.dev/node-group" = "agent-e2e" }
  mig_layout    = mig_layout.halves
}

tenant "agente2e" {
  namespace = "agent-e2e"
  quota "agente2e" {
    slices = { "3g.40gb" = 4 }
  }
  priorities       = [priority.agente2e]
  default_priority = priority.agente2e
}

model "classifier" {
  tenant      = tenant.agente2e
  pool        = pool.agente2e
  slice       = "3g.40gb"
  format      = "sklearn"
  storage_uri = "gs://kfserving-examples/models/sklearn/1.0/model"
}
`

// Agent end to end on the real API server: the agent, in-process with 8
// simulated A100-80GBs and the RBAC and admission policy of agent.yaml,
// publishes its inventory; gpuform apply of a stack with mig_backend =
// "agent" sets the layout annotation, the agent applies it, the state turns
// success, the inventory shows the instances, and apply goes on to the model
// on those slices. Then the agent stops when cancelled.
func TestAgentEndToEnd(t *testing.T) {
	setupCluster(t)
	const node = "agent-e2e-gpu-0"
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := clientset(t)
	if err := kubeapitest.CreateNodes(ctx, cfg, kubeapitest.GPUNode{
		Name: node,
		Labels: map[string]string{"gpuform.dev/node-group": "agent-e2e", "nvidia.com/gpu.present": "true",
			"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/mig.capable": "true"},
		Capacity: map[string]string{"nvidia.com/gpu": "8", "cpu": "128", "memory": "1Ti"},
	}); err != nil {
		t.Fatal(err)
	}
	// The agent's RBAC and admission policy, for real (not the DaemonSet).
	applyManifest(t, false, func(o *unstructured.Unstructured) bool { return o.GetKind() != "DaemonSet" })

	kubeconfig := agentKubeconfig(t, node)
	// What the agent's credentials may do: dry runs, so that a failure
	// changes nothing. The admission policy takes a moment to load.
	t.Run("least privilege", func(t *testing.T) {
		rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		agentCS := kubernetes.NewForConfigOrDie(rc)
		patch := func(name string, p string) error {
			_, err := agentCS.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{FieldManager: "intruder", DryRun: []string{metav1.DryRunAll}})
			return err
		}
		other := `{"metadata":{"annotations":{"gpuform.dev/mig-state":"success"}}}`
		deadline := time.Now().Add(20 * time.Second)
		for err := patch("a100-0", other); err == nil && time.Now().Before(deadline); err = patch("a100-0", other) {
			time.Sleep(100 * time.Millisecond)
		}
		if err := patch("a100-0", other); err == nil || !strings.Contains(err.Error(), "only the node its pod runs on") {
			t.Errorf("the agent annotated another node: %v", err)
		}
		if err := patch(node, other); err != nil {
			t.Errorf("the agent may not annotate its own node: %v", err)
		}
		if err := patch(node, `{"metadata":{"labels":{"gpuform.dev/node-group":"elsewhere"}}}`); err == nil || !strings.Contains(err.Error(), "spec or labels") {
			t.Errorf("the agent relabelled its node: %v", err)
		}
		if err := patch(node, `{"spec":{"unschedulable":true}}`); err == nil || !strings.Contains(err.Error(), "spec or labels") {
			t.Errorf("the agent cordoned its node: %v", err)
		}
		if err := patch(node, `{"metadata":{"annotations":{"gpuform.dev/mig-layout":"{}"}}}`); err == nil || !strings.Contains(err.Error(), "only the annotations") {
			t.Errorf("the agent changed the layout annotation: %v", err)
		}
		if _, err := agentCS.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("the agent may list nodes: %v", err)
		}
		if _, err := agentCS.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("the agent may read namespaces: %v", err)
		}
	})

	logs, stop := runAgent(t, "--kubeconfig", kubeconfig, "agent", "--node", node, "--simulate-gpus", "A100-80GB:8", "--resync", "1s")
	n := waitNode(t, cs, node, "the inventory", 30*time.Second, func(n *corev1.Node) bool { return n.Annotations[agentv1.AnnotInventory] != "" })
	if inv := capacity.InventoryOf(unstructuredNode(t, n), mig.Default()); inv.Source != "agent" || inv.Model != "A100-80GB" || inv.GPUs != 8 || len(inv.MIG) != 0 {
		t.Fatalf("inventory before apply = %+v", inv)
	}
	if n.Annotations[agentv1.AnnotMIGState] != "" {
		t.Errorf("mig-state before any layout = %q", n.Annotations[agentv1.AnnotMIGState])
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(agentE2EConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := applyOK(t, nil, dir)
	t.Logf("apply took %s:\n%s", time.Since(start).Round(time.Millisecond), r.stdout)

	n, err = cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var layout struct {
		Name   string         `json:"name"`
		GPU    string         `json:"gpu"`
		Config agentv1.Layout `json:"config"`
	}
	if err := json.Unmarshal([]byte(n.Annotations[agentv1.AnnotMIGLayout]), &layout); err != nil || layout.Name != "halves" || len(layout.Config) != 1 || layout.Config[0].Slices["3g.40gb"] != 2 {
		t.Fatalf("mig-layout annotation %q (%v)", n.Annotations[agentv1.AnnotMIGLayout], err)
	}
	// apply waits for the agent: the state is success when it returns.
	if got := n.Annotations[agentv1.AnnotMIGState]; got != "success" {
		t.Errorf("mig-state when apply returned = %q, want success (does apply wait for the agent?)", got)
		n = waitNode(t, cs, node, "mig-state success", 30*time.Second, func(n *corev1.Node) bool { return n.Annotations[agentv1.AnnotMIGState] == "success" })
	}
	n = waitNode(t, cs, node, "the inventory with the layout", 10*time.Second, func(n *corev1.Node) bool {
		return capacity.InventoryOf(unstructuredNode(t, n), mig.Default()).MIG["3g.40gb"] == 16
	})
	var inv agentv1.Inventory
	if err := json.Unmarshal([]byte(n.Annotations[agentv1.AnnotInventory]), &inv); err != nil {
		t.Fatal(err)
	}
	for _, g := range inv.GPUs {
		var got []string
		for _, in := range g.Instances {
			got = append(got, in.String())
		}
		if strings.Join(got, " ") != "3g.40gb@0:4 3g.40gb@4:4" || !g.MIGEnabled {
			t.Errorf("GPU %d: instances %v, MIG on %v", g.Index, got, g.MIGEnabled)
		}
	}
	for _, f := range n.ManagedFields {
		if f.Manager == agentv1.FieldManager && f.Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("the agent wrote with %s, want server-side apply", f.Operation)
		}
	}
	if _, err := dynamicGet(ctx, t, "serving.kserve.io", "v1beta1", "inferenceservices", "agent-e2e", "classifier"); err != nil {
		t.Errorf("the InferenceService on the slices: %v", err)
	}
	nodeDone := strings.Index(r.stdout, "Modifications complete after")
	modelStart := strings.Index(r.stdout, "Creating InferenceService agent-e2e/classifier")
	if nodeDone < 0 || modelStart < nodeDone {
		t.Errorf("apply created the model before the node's MIG layout was done")
	}
	if again := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode"); again.code != 0 {
		t.Errorf("plan after apply: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}

	// A new layout: the agent destroys what must go and creates the rest.
	mixed := strings.Replace(agentE2EConfig, `slices = { "3g.40gb" = 2 }`, `slices = { "3g.40gb" = 1, "1g.10gb" = 4 }`, 1)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(mixed), 0o644); err != nil {
		t.Fatal(err)
	}
	applyOK(t, nil, dir)
	n, err = cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Annotations[agentv1.AnnotMIGState]; got != "success" {
		t.Errorf("mig-state after the second apply = %q", got)
	}
	n = waitNode(t, cs, node, "the inventory with the new layout", 10*time.Second, func(n *corev1.Node) bool {
		m := capacity.InventoryOf(unstructuredNode(t, n), mig.Default()).MIG
		return m["3g.40gb"] == 8 && m["1g.10gb"] == 32 && len(m) == 2
	})

	res := stop()
	if res.code != 0 {
		t.Errorf("the agent exited %d after cancel:\n%s", res.code, res.stderr)
	}
	log := logs.String()
	t.Logf("agent log:\n%s", log)
	for _, want := range []string{"node agent-e2e-gpu-0: agent started", `applying MIG layout "halves"`, `MIG layout "halves" applied: 16 GPU instances created, 0 destroyed, 8 MIG mode changes`,
		`MIG layout "halves" applied: 32 GPU instances created, 8 destroyed, 0 MIG mode changes`, "agent stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("agent log lacks %q:\n%s", want, log)
		}
	}
	// Stopped: a new layout is not applied any more.
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(`{"metadata":{"annotations":{"gpuform.dev/mig-layout":"{\"name\":\"x\",\"config\":[{\"devices\":\"all\",\"mig-enabled\":false}]}"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n, _ := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); n.Annotations[agentv1.AnnotMIGState] != "success" {
		t.Errorf("mig-state changed after the agent stopped: %q", n.Annotations[agentv1.AnnotMIGState])
	}
}

func unstructuredNode(t *testing.T, n *corev1.Node) *unstructured.Unstructured {
	t.Helper()
	m, err := runtimeToUnstructured(n)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func runtimeToUnstructured(n *corev1.Node) (map[string]any, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// The agent command's errors: no node name, no NVML, a GPU go-nvml does not
// simulate; each one line, exit 1.
func TestAgentCommandErrors(t *testing.T) {
	r := runGpuform(t, nil, "agent")
	if r.code != 1 || !strings.Contains(r.stderr, "pass --node NAME or set NODE_NAME") {
		t.Errorf("no node: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runGpuform(t, nil, "--kubeconfig", srv.Kubeconfig, "agent", "--node", "x", "--simulate-gpus", "L40S:2")
	if r.code != 1 || !strings.Contains(r.stderr, "go-nvml cannot simulate L40S") {
		t.Errorf("L40S: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runGpuform(t, nil, "agent", "--node", "x", "--simulate-gpus", "A100-80GB")
	if r.code != 1 || !strings.Contains(r.stderr, "want MODEL:COUNT") {
		t.Errorf("no count: exit %d, stderr %q", r.code, r.stderr)
	}

	if lib, err := nvml.Local(); err == nil {
		if s, err := nvml.Open(lib); err == nil {
			s.Close()
			t.Logf("this machine has NVML: not checking the agent without it")
			return
		}
	}
	r = runGpuform(t, []string{"NODE_NAME=gpu-7"}, "--kubeconfig", srv.Kubeconfig, "agent")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "Error: gpuform agent: NVML is not available on node gpu-7: ") || !strings.Contains(r.stderr, "runtimeClassName nvidia") {
		t.Errorf("no NVML: exit %d, stderr %q", r.code, r.stderr)
	}
}

// As a process, the agent stops cleanly on SIGTERM (what the kubelet sends
// when the pod is deleted): exit 0, after saying so.
func TestAgentSIGTERM(t *testing.T) {
	const node = "agent-sigterm-0"
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.CreateNodes(ctx, cfg, kubeapitest.GPUNode{Name: node, Labels: map[string]string{"nvidia.com/gpu.present": "true"}}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--kubeconfig", srv.Kubeconfig, "agent", "--simulate-gpus", "H100-80GB:2")
	cmd.Env = append(os.Environ(), "GPUFORM_BE_MAIN=1", "NODE_NAME="+node)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a no-op once it exited
	waitNode(t, clientset(t), node, "the inventory", 60*time.Second, func(n *corev1.Node) bool { return n.Annotations[agentv1.AnnotInventory] != "" })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(stderr.String(), "node agent-sigterm-0: agent stopped") {
			t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the agent did not exit within 10s of SIGTERM:\n%s", stderr.String())
	}
}
