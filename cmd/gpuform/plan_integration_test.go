package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// srv is the package's real kube-apiserver + etcd.
var srv *kubeapitest.Server

// TestMain runs one API server for the package. With GPUFORM_BE_MAIN=1 the
// test binary is gpuform itself, so tests can run it as a process to kill.
func TestMain(m *testing.M) {
	if os.Getenv("GPUFORM_BE_MAIN") == "1" {
		main()
		return
	}
	klog.SetLogger(logr.Discard()) // as main does
	// make docs regenerates docs/cli.md with TestCLIReference alone, which
	// needs no API server: a fresh checkout need not build one first.
	if os.Getenv("GPUFORM_DOCS_ONLY") == "1" {
		os.Exit(m.Run())
	}
	kubeapitest.Main(m, &srv)
}

// clusterOnce prepares what every integration test shares: the CRDs of
// Kueue, KServe, the GPU Operator and the Prometheus Operator (not Volcano:
// tests need a missing CRD), the GPU Operator's and the monitoring stack's
// namespaces, and simulated GPU nodes.
var clusterOnce = sync.OnceValue(func() error {
	ctx := context.Background()
	cfg, err := srv.RESTConfig()
	if err != nil {
		return err
	}
	if err := kubeapitest.ApplyCRDs(ctx, cfg, "kueue.yaml", "kserve.yaml", "gpu-operator.yaml", "prometheus-operator.yaml"); err != nil {
		return err
	}
	if err := kubeapitest.CreateNamespaces(ctx, cfg, "gpu-operator", "monitoring"); err != nil {
		return err
	}
	if err := kubeapitest.CreateClusterPolicy(ctx, cfg, "cluster-policy"); err != nil {
		return err
	}
	go kubeapitest.PlayMigManager(context.Background(), cfg)
	var nodes []kubeapitest.GPUNode
	for i := range 2 {
		nodes = append(nodes, kubeapitest.GPUNode{
			Name:     fmt.Sprintf("a100-%d", i),
			Labels:   map[string]string{"gpuform.dev/node-group": "a100", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/mig.capable": "true"},
			Capacity: map[string]string{"nvidia.com/gpu": "8", "cpu": "128", "memory": "1Ti"},
		})
	}
	nodes = append(nodes,
		kubeapitest.GPUNode{
			Name:     "h100-0",
			Labels:   map[string]string{"gpuform.dev/node-group": "h100", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"},
			Capacity: map[string]string{"nvidia.com/gpu": "8", "cpu": "128", "memory": "1Ti"},
		},
		kubeapitest.GPUNode{Name: "cpu-0", Labels: map[string]string{"role": "cpu"}, Capacity: map[string]string{"cpu": "64", "memory": "256Gi"}},
	)
	return kubeapitest.CreateNodes(ctx, cfg, nodes...)
})

func setupCluster(t *testing.T) {
	t.Helper()
	if err := clusterOnce(); err != nil {
		t.Fatalf("prepare the test cluster: %v", err)
	}
}

// runWith runs gpuform in-process against the test server, counting requests.
func runWith(t *testing.T, counter *kubeapitest.Counter, args ...string) result {
	t.Helper()
	// Locked: the request log (-v 2) writes from the HTTP goroutines while
	// the command prints its phases; os.Stderr takes both, a bytes.Buffer not.
	var out, errb syncBuffer
	g := &globals{stdout: &out, stderr: &errb}
	if counter != nil {
		g.wrapTransport = counter.Wrap
	}
	cmd := newRoot(g)
	cmd.SetArgs(append([]string{"--kubeconfig", srv.Kubeconfig, "--no-color"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return toResult(out.String(), errb.String(), err)
}

// copyExample copies an example's main.hcl into a temp dir, applying
// replacements, and returns the dir.
func copyExample(t *testing.T, example string, replace ...string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", example, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			t.Fatalf("example %s has no %q", example, replace[i])
		}
		text = strings.Replace(text, replace[i], replace[i+1], 1)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// applyOK runs gpuform --chdir dir apply --auto-approve with extra apply
// flags and fails the test unless it succeeds.
func applyOK(t *testing.T, counter *kubeapitest.Counter, dir string, flags ...string) result {
	t.Helper()
	r := runWith(t, counter, append([]string{"--chdir", dir, "apply", "--auto-approve"}, flags...)...)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r
}

// before asserts that request a was sent before request b.
func before(t *testing.T, reqs []string, a, b string) {
	t.Helper()
	ia, ib := -1, -1
	for i, r := range reqs {
		if r == a && ia < 0 {
			ia = i
		}
		if r == b && ib < 0 {
			ib = i
		}
	}
	if ia < 0 || ib < 0 || ia > ib {
		t.Errorf("want %q (at %d) before %q (at %d)", a, ia, b, ib)
	}
}

var portRE = regexp.MustCompile(`https://127\.0\.0\.1:\d+`)

// normalize replaces what differs between runs: the server's port.
func normalize(s string) string { return portRE.ReplaceAllString(s, "https://127.0.0.1:PORT") }

func TestPlanBankLifecycle(t *testing.T) {
	setupCluster(t)
	resetMIGStrategy(t)
	dir := copyExample(t, "bank")
	withAudit := t.TempDir() // outlives the subtest that fills it
	goldenDir := filepath.Join("..", "..", "testdata", "plan")

	t.Run("empty cluster plans every object as a create", func(t *testing.T) {
		r := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode")
		if r.code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
		}
		golden(t, filepath.Join(goldenDir, "bank-create.txt"), normalize(r.stdout))
		j := runWith(t, nil, "--chdir", dir, "plan", "--json")
		golden(t, filepath.Join(goldenDir, "bank-create.json"), normalize(j.stdout))
		if !strings.Contains(r.stdout, "Plan: 49 to add, 4 to change, 0 to destroy.") {
			t.Errorf("unexpected summary:\n%s", r.stdout)
		}
	})

	t.Run("apply from empty in dependency order", func(t *testing.T) {
		var c kubeapitest.Counter
		r := applyOK(t, &c, dir)
		if !strings.Contains(r.stdout, "Apply complete! Resources: 49 added, 4 changed, 0 destroyed.") {
			t.Errorf("unexpected apply output:\n%s", r.stdout)
		}
		// 53 changes, more than a line each (render.PerChangeMax): status
		// lines, the last with every change done.
		if !strings.Contains(r.stdout, "Progress: 53/53 done, 0 failed, finished in") {
			t.Errorf("apply does not report its progress:\n%s", r.stdout)
		}
		reqs := c.Ordered()
		before(t, reqs, "PATCH /api/v1/namespaces/risk", "PATCH /api/v1/namespaces/risk/resourcequotas/gpuform")
		before(t, reqs, "PATCH /apis/scheduling.k8s.io/v1/priorityclasses/realtime", "PATCH /apis/serving.kserve.io/v1beta1/namespaces/risk/inferenceservices/fraud-detector")
		before(t, reqs, "PATCH /apis/kueue.x-k8s.io/v1beta2/clusterqueues/risk", "PATCH /apis/kueue.x-k8s.io/v1beta2/namespaces/risk/localqueues/default")
		for _, req := range reqs {
			// The lock's Lease and the older versions of the stack's record
			// are gpuform's own, not the cluster's objects.
			if strings.HasPrefix(req, "POST /api/v1/nodes") || (strings.HasPrefix(req, "DELETE ") && !strings.Contains(req, "/leases/") && !strings.Contains(req, "/configmaps/gpuform-inventory-")) {
				t.Errorf("apply from empty sent %s", req)
			}
		}
	})

	t.Run("applied cluster is a no-op", func(t *testing.T) {
		r := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "No changes.") {
			t.Errorf("want No changes, got:\n%s", r.stdout)
		}
	})

	t.Run("changed quota", func(t *testing.T) {
		r := runWith(t, nil, "--chdir", dir, "--var", "risk_gpus=1", "plan", "--detailed-exitcode")
		if r.code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
		}
		golden(t, filepath.Join(goldenDir, "bank-quota.txt"), normalize(r.stdout))
		j := runWith(t, nil, "--chdir", dir, "--var", "risk_gpus=1", "plan", "--json")
		golden(t, filepath.Join(goldenDir, "bank-quota.json"), normalize(j.stdout))
	})

	t.Run("removed model", func(t *testing.T) {
		src, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
		text := string(src)
		i := strings.Index(text, `model "invoice-reader"`)
		removed := t.TempDir()
		if err := os.WriteFile(filepath.Join(removed, "main.hcl"), []byte(text[:i]), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runWith(t, nil, "--chdir", removed, "plan", "--detailed-exitcode")
		if r.code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
		}
		golden(t, filepath.Join(goldenDir, "bank-remove-model.txt"), normalize(r.stdout))
		j := runWith(t, nil, "--chdir", removed, "plan", "--json")
		golden(t, filepath.Join(goldenDir, "bank-remove-model.json"), normalize(j.stdout))
	})

	t.Run("hand-edited label on a managed object", func(t *testing.T) {
		ctx := kubeapitest.Context(t)
		cs := clientset(t)
		ns, err := cs.CoreV1().Namespaces().Get(ctx, "risk", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels["team"] = "hacked"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		r := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode")
		if r.code != 2 {
			t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
		}
		golden(t, filepath.Join(goldenDir, "bank-hand-edit.txt"), normalize(r.stdout))
		j := runWith(t, nil, "--chdir", dir, "plan", "--json")
		golden(t, filepath.Join(goldenDir, "bank-hand-edit.json"), normalize(j.stdout))
		applyOK(t, nil, dir)
		if r := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode"); r.code != 0 {
			t.Errorf("plan after re-apply: exit %d\n%s", r.code, r.stdout)
		}
	})

	t.Run("MIG re-partitioning waits for mig-manager", func(t *testing.T) {
		ctx := kubeapitest.Context(t)
		cs := clientset(t)
		setFail := func(on bool) {
			n, err := cs.CoreV1().Nodes().Get(ctx, "a100-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if on {
				n.Labels[kubeapitest.MigFailLabel] = "true"
			} else {
				delete(n.Labels, kubeapitest.MigFailLabel)
			}
			if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		src, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
		relayout := t.TempDir()
		text := strings.Replace(string(src), `"1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1`, `"1g.10gb" = 1, "2g.20gb" = 1, "3g.40gb" = 1`, 1)
		text = strings.Replace(text, `replicas    = { min = 2, max = 2 }`, `replicas    = { min = 2, max = 3 }`, 1)
		if err := os.WriteFile(filepath.Join(relayout, "main.hcl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		// A pod using a MIG slice on a100-0 makes re-partitioning disruptive.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "scorer", Namespace: "risk"},
			Spec: corev1.PodSpec{NodeName: "a100-0", NodeSelector: map[string]string{"gpuform.dev/pool": "a100"}, Containers: []corev1.Container{{
				Name: "scorer", Image: "scorer:1",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"nvidia.com/mig-1g.10gb": resource.MustParse("1"), "cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{"nvidia.com/mig-1g.10gb": resource.MustParse("1")},
				},
			}}},
		}
		var err error
		for i := 0; i < 50; i++ { // the quota controller fills the quota's status first
			if _, err = cs.CoreV1().Pods("risk").Create(ctx, pod, metav1.CreateOptions{}); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		r := runWith(t, nil, "--chdir", relayout, "plan")
		if !strings.Contains(r.stdout, "Re-partitioning node a100-0 disrupts the pods using its GPUs: risk/scorer") {
			t.Errorf("plan does not list the disrupted pod:\n%s", r.stdout)
		}
		r = runWith(t, nil, "--chdir", relayout, "apply", "--auto-approve")
		if r.code != 1 || !strings.Contains(r.stderr, "--allow-disruption") {
			t.Fatalf("disruptive apply without --allow-disruption: exit %d\n%s", r.code, r.stderr)
		}
		setFail(true)
		r = runWith(t, nil, "--chdir", relayout, "apply", "--auto-approve", "--allow-disruption")
		if r.code != 1 {
			t.Fatalf("apply with a failing mig-manager: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		flat := strings.Join(strings.Fields(r.stderr), " ")
		for _, want := range []string{
			"failed Node a100-1",
			"node a100-1 failed to apply its MIG layout (nvidia.com/mig.config.state=failed)",
			"skipped InferenceService risk/fraud-detector",
		} {
			if !strings.Contains(flat, want) {
				t.Errorf("report lacks %q:\n%s", want, r.stderr)
			}
		}
		if !strings.Contains(r.stdout, "Modifications complete after") || !strings.Contains(r.stdout, "[Node a100-0]") {
			t.Errorf("the healthy node was not re-partitioned:\n%s", r.stdout)
		}
		setFail(false)
		applyOK(t, nil, relayout, "--allow-disruption")
		if p := runWith(t, nil, "--chdir", relayout, "plan", "--detailed-exitcode"); p.code != 0 {
			t.Errorf("plan after mig-manager succeeded: exit %d\n%s", p.code, p.stdout)
		}
		isvc, err := dynamicGet(ctx, t, "serving.kserve.io", "v1beta1", "inferenceservices", "risk", "fraud-detector")
		if err != nil {
			t.Fatal(err)
		}
		if max, _, _ := unstructuredInt(isvc, "spec", "predictor", "maxReplicas"); max != 3 {
			t.Errorf("fraud-detector maxReplicas = %d after the rerun, want 3", max)
		}
		applyOK(t, nil, dir, "--allow-disruption") // back to the example's layout
		if err := cs.CoreV1().Pods("risk").Delete(ctx, "scorer", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("unmanaged object in the way", func(t *testing.T) {
		ctx := kubeapitest.Context(t)
		cs := clientset(t)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audit", Labels: map[string]string{"owner": "security"}}}, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
			t.Fatal(err)
		}
		src, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
		text := string(src) + "\ntenant \"audit\" {\n  protect = false\n}\n"
		if err := os.WriteFile(filepath.Join(withAudit, "main.hcl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runWith(t, nil, "--chdir", withAudit, "plan", "--detailed-exitcode")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1 (a conflict); stdout:\n%s", r.code, r.stdout)
		}
		if !strings.Contains(r.stderr, "in the way") {
			t.Errorf("stderr does not explain the conflict:\n%s", r.stderr)
		}
		golden(t, filepath.Join(goldenDir, "bank-conflict.txt"), normalize(r.stdout))
		a := runWith(t, nil, "--chdir", withAudit, "plan", "--adopt", "--detailed-exitcode")
		if a.code != 2 {
			t.Fatalf("--adopt: exit %d, want 2; stderr:\n%s", a.code, a.stderr)
		}
		golden(t, filepath.Join(goldenDir, "bank-adopt.txt"), normalize(a.stdout))
		j := runWith(t, nil, "--chdir", withAudit, "plan", "--adopt", "--json")
		golden(t, filepath.Join(goldenDir, "bank-adopt.json"), normalize(j.stdout))

		// apply without --adopt never touches the foreign namespace.
		nsBefore, err := cs.CoreV1().Namespaces().Get(ctx, "audit", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r = runWith(t, nil, "--chdir", withAudit, "apply", "--auto-approve")
		if r.code != 1 || !strings.Contains(r.stderr, "--adopt") {
			t.Fatalf("apply over a foreign object: exit %d, stderr:\n%s", r.code, r.stderr)
		}
		nsAfter, err := cs.CoreV1().Namespaces().Get(ctx, "audit", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if nsAfter.ResourceVersion != nsBefore.ResourceVersion || nsAfter.Labels["app.kubernetes.io/managed-by"] != "" {
			t.Fatalf("apply without --adopt modified the foreign namespace: %v", nsAfter.Labels)
		}
		applyOK(t, nil, withAudit, "--adopt")
		nsAfter, _ = cs.CoreV1().Namespaces().Get(ctx, "audit", metav1.GetOptions{})
		if nsAfter.Labels["gpuform.dev/stack"] != "bank-prod" || nsAfter.Labels["owner"] != "security" {
			t.Errorf("adopted namespace labels: %v (want the stack label and the owner's label kept)", nsAfter.Labels)
		}
		if r := runWith(t, nil, "--chdir", withAudit, "plan", "--detailed-exitcode"); r.code != 0 {
			t.Errorf("plan after adopting: exit %d\n%s", r.code, r.stdout)
		}
		dir = withAudit
	})

	t.Run("saved plan made stale by a hand edit is refused", func(t *testing.T) {
		planFile := filepath.Join(t.TempDir(), "quota.plan")
		r := runWith(t, nil, "--chdir", dir, "--var", "risk_gpus=1", "plan", "--out", planFile)
		if r.code != 0 || !strings.Contains(r.stdout, "gpuform apply "+planFile) {
			t.Fatalf("plan --out: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		shown := runWith(t, nil, "show", planFile)
		if !strings.Contains(shown.stdout, "Plan: 0 to add, 2 to change, 0 to destroy.") {
			t.Errorf("show of the saved plan:\n%s", shown.stdout)
		}
		ctx := kubeapitest.Context(t)
		cs := clientset(t)
		ns, _ := cs.CoreV1().Namespaces().Get(ctx, "chatbot", metav1.GetOptions{})
		ns.Labels["edited"] = "by-hand"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		r = runWith(t, nil, "apply", planFile)
		if r.code != 1 || !strings.Contains(r.stderr, "Error: Saved plan is stale") || !strings.Contains(r.stderr, "Namespace chatbot (changed since the plan)") {
			t.Fatalf("stale plan: exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		r = runWith(t, nil, "--chdir", dir, "--var", "risk_gpus=1", "plan", "--out", planFile)
		if r.code != 0 {
			t.Fatalf("re-plan: %s", r.stderr)
		}
		if r := runWith(t, nil, "apply", planFile); r.code != 0 {
			t.Fatalf("apply of a fresh saved plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if r := runWith(t, nil, "--chdir", dir, "--var", "risk_gpus=1", "plan", "--detailed-exitcode"); r.code != 0 {
			t.Errorf("plan after applying the saved plan: exit %d\n%s", r.code, r.stdout)
		}
		// An edited plan file is refused by its checksum.
		src, _ := os.ReadFile(planFile)
		_ = os.WriteFile(planFile, bytes.Replace(src, []byte(`"nominalQuota": "1"`), []byte(`"nominalQuota": "9"`), 1), 0o600)
		if r := runWith(t, nil, "apply", planFile); r.code != 1 || !strings.Contains(r.stderr, "checksum") {
			t.Errorf("edited plan file: exit %d\n%s", r.code, r.stderr)
		}
		applyOK(t, nil, dir)
	})

	t.Run("deleting a protected tenant needs --allow-destroy", func(t *testing.T) {
		src, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
		text := string(src)
		start := strings.Index(text, `tenant "risk" {`)
		end := start + strings.Index(text[start:], "\n}\n") + 3
		text = text[:start] + text[end:]
		mstart := strings.Index(text, `model "fraud-detector" {`)
		mend := mstart + strings.Index(text[mstart:], "\n}\n") + 3
		text = text[:mstart] + text[mend:]
		noRisk := t.TempDir()
		if err := os.WriteFile(filepath.Join(noRisk, "main.hcl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runWith(t, nil, "--chdir", noRisk, "apply", "--auto-approve")
		if r.code != 1 || !strings.Contains(r.stderr, "Unsafe plan") || !strings.Contains(r.stderr, "risk (tenant.risk)") {
			t.Fatalf("protected delete: exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		ctx := kubeapitest.Context(t)
		if _, err := clientset(t).CoreV1().Namespaces().Get(ctx, "risk", metav1.GetOptions{}); err != nil {
			t.Errorf("namespace risk after a refused apply: %v", err)
		}
	})
}

func clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// tenantsConfig is a stack of n tenants with one model each, on a pool of
// its own GPU node (created here) that shares no GPU Operator ConfigMap, so
// stacks of different tests do not meet.
func tenantsConfig(t *testing.T, stack string, n int) string {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return tenantsConfigOn(t, cfg, stack, n)
}

// tenantsConfigOn is tenantsConfig with its GPU node on the server cfg
// reaches (a test's own server).
func tenantsConfigOn(t *testing.T, cfg *rest.Config, stack string, n int) string {
	t.Helper()
	dir := t.TempDir()
	src := fmt.Sprintf(`gpuform {
  stack = %[1]q
}

priority %[1]q {
  value = 100
}

pool %[1]q {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = %[1]q }
  overcommit    = %[3]d
}

tenant "t" {
  for_each  = toset([for i in range(%[2]d) : format("%%04d", i)])
  namespace = "%[1]s-${each.key}"
  quota %[1]q {
    gpus = 1
  }
  priorities       = [priority.%[1]s]
  default_priority = priority.%[1]s
  admins           = ["group:team-${each.key}"]
  protect          = false
}

model "m" {
  for_each    = tenant.t
  tenant      = each.value
  pool        = pool.%[1]s
  gpus        = 1
  format      = "onnx"
  storage_uri = "s3://models/${each.key}"
}
`, stack, n, n/8+1)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.CreateNodes(context.Background(), cfg, kubeapitest.GPUNode{
		Name:     stack + "-gpu-0",
		Labels:   map[string]string{"gpuform.dev/node-group": stack, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"},
		Capacity: map[string]string{"nvidia.com/gpu": "8"},
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPlanRequestCountIsConstant(t *testing.T) {
	setupCluster(t)
	var reqs [2][]string
	for i, n := range []int{10, 1000} {
		stack := fmt.Sprintf("count%d", n)
		dir := tenantsConfig(t, stack, n)
		var c kubeapitest.Counter
		r := runWith(t, &c, "--chdir", dir, "plan", "--detailed-exitcode")
		if r.code != 2 {
			t.Fatalf("%d tenants: exit %d, want 2; stderr:\n%s", n, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("Plan: %d to add", 4*n+11)) {
			t.Errorf("%d tenants: unexpected summary: %s", n, lastLine(r.stdout))
		}
		if m := c.Mutating(); len(m) > 0 {
			t.Errorf("%d tenants: plan wrote to the cluster: %v", n, m)
		}
		reqs[i] = c.Requests()
		for _, req := range reqs[i] {
			if strings.Contains(req, "/"+stack) {
				t.Errorf("%d tenants: request for one object: %s", n, req)
			}
		}
	}
	if strings.Join(reqs[0], "\n") != strings.Join(reqs[1], "\n") {
		t.Errorf("10 tenants made %d requests, 1000 made %d:\n%s\n---\n%s", len(reqs[0]), len(reqs[1]), strings.Join(reqs[0], "\n"), strings.Join(reqs[1], "\n"))
	}
	t.Logf("plan requests for 10 and for 1000 tenants: %d", len(reqs[0]))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

func TestPlanClusterErrors(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "errs", 1)
	bad := t.TempDir()
	unreachable := filepath.Join(bad, "unreachable")
	writeKubeconfig(t, unreachable, "https://127.0.0.1:1", "token: nope")
	tokenCfg, err := os.ReadFile(srv.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	badToken := filepath.Join(bad, "badtoken")
	re := regexp.MustCompile(`token: .*`)
	if err := os.WriteFile(badToken, re.ReplaceAll(tokenCfg, []byte("token: not-the-token")), 0o600); err != nil {
		t.Fatal(err)
	}
	volcano := tenantsConfig(t, "volc", 1)
	src, _ := os.ReadFile(filepath.Join(volcano, "main.hcl"))
	_ = os.WriteFile(filepath.Join(volcano, "main.hcl"), bytes.Replace(src, []byte(`stack = "volc"`), []byte(`stack = "volc"
  scheduler = "volcano"`), 1), 0o644)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unreachable server", []string{"--kubeconfig", unreachable, "--chdir", dir, "plan"}, []string{"cannot reach the Kubernetes API server at https://127.0.0.1:1", "Check that the cluster is running"}},
		{"wrong context", []string{"--context", "nope", "--chdir", dir, "plan"}, []string{`context "nope" is not in the kubeconfig`, "Available contexts: kubeapi"}},
		{"invalid credentials", []string{"--kubeconfig", badToken, "--chdir", dir, "plan"}, []string{"rejected the credentials (401 Unauthorized)", "refresh it"}},
		{"missing CRD", []string{"--chdir", volcano, "plan"}, []string{"tenant.t[\"0000\"] needs Queue (scheduling.volcano.sh/v1beta1)", "install Volcano"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			cmd := newRoot(&globals{stdout: &out, stderr: &errb, wrapTransport: func(rt http.RoundTripper) http.RoundTripper { return rt }})
			args := tt.args
			if args[0] != "--kubeconfig" {
				args = append([]string{"--kubeconfig", srv.Kubeconfig}, args...)
			}
			cmd.SetArgs(args)
			err := cmd.ExecuteContext(context.Background())
			r := toResult(out.String(), errb.String(), err)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 6 {
				t.Errorf("error is %d lines; want one paragraph:\n%s", n+1, r.stderr)
			}
		})
	}
}

func writeKubeconfig(t *testing.T, path, server, user string) {
	t.Helper()
	src := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    %s
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`, server, user)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// dynamicGet reads one object (test helper).
func dynamicGet(ctx context.Context, t *testing.T, group, version, resource, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: resource}).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

func unstructuredInt(u *unstructured.Unstructured, path ...string) (int64, bool, error) {
	return unstructured.NestedInt64(u.Object, path...)
}

// resetMIGStrategy sets the package's ClusterPolicy to mig.strategy
// single, the GPU Operator chart's default, as the GPU Operator would
// (field manager gpu-operator): tests that run earlier in the package may
// have applied stacks with MIG pools, which set it to mixed, and the plan
// goldens show gpuform changing it.
func resetMIGStrategy(t *testing.T) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}
	ctx := context.Background()
	cp, err := dynamicClient(t).Resource(gvr).Get(ctx, "cluster-policy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(cp.Object, "single", "spec", "mig", "strategy"); err != nil {
		t.Fatal(err)
	}
	if _, err := dynamicClient(t).Resource(gvr).Update(ctx, cp, metav1.UpdateOptions{FieldManager: "gpu-operator"}); err != nil {
		t.Fatal(err)
	}
}
