package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// testPlanKey is the plan key of these tests (64 hex digits).
var testPlanKey = strings.Repeat("c0ffee42", 8)

// runEnv is runWith with the environment env (os.Environ form).
func runEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRoot(&globals{stdout: &out, stderr: &errb, env: env})
	cmd.SetArgs(append([]string{"--kubeconfig", srv.Kubeconfig, "--no-color"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return toResult(out.String(), errb.String(), err)
}

// editPlanFile rewrites the saved plan at path as someone who can edit it
// but holds no key can: decode, edit, recompute the checksum (Write),
// unsigned unless keepSignature puts the old signature back.
func editPlanFile(t *testing.T, path, dst string, keepSignature bool, edit func(pf *engine.PlanFile)) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pf engine.PlanFile
	if err := json.Unmarshal(src, &pf); err != nil {
		t.Fatal(err)
	}
	sig := pf.Signature
	edit(&pf)
	var buf bytes.Buffer
	if err := pf.Write(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if keepSignature {
		pf.Signature = sig
		if out, err = json.Marshal(&pf); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// namespaceAlive fails the test unless namespace name exists and is not
// being deleted.
func namespaceAlive(t *testing.T, name string) {
	t.Helper()
	ns, err := clientset(t).CoreV1().Namespaces().Get(kubeapitest.Context(t), name, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("namespace %s: %v (deleting: %v), want it left alone", name, err, err == nil && ns.DeletionTimestamp != nil)
	}
}

// A saved plan is trusted for nothing apply can check. Deletes of objects
// outside the stack (an unlabelled namespace, one merely labelled with the
// stack), added to a valid plan file with its checksum recomputed and the
// summary left at 0 deletes, are refused under the lock and nothing is
// deleted; before, both namespaces were deleted and apply exited 0. With
// GPUFORM_PLAN_KEY the plan is signed: an edit with the signature kept is
// refused, a signed plan is refused without the key, and the untouched
// signed plan applies. Without a key an unsigned plan gets a warning. A
// plan file whose changes form a cycle is refused at once.
func TestSavedPlanTrust(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	dir := tenantsConfig(t, "pftrust", 2)
	applyOK(t, nil, dir)
	foreign, err := cs.CoreV1().Namespaces().Create(ctx, nsObject("pftrust-foreign"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	forgedNS := nsObject("pftrust-forged")
	forgedNS.Labels = map[string]string{engine.LabelStack: "pftrust", engine.LabelManagedBy: engine.ManagedByValue}
	forged, err := cs.CoreV1().Namespaces().Create(ctx, forgedNS, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	if r := runWith(t, nil, "--chdir", dir, "plan", "--out", "plan.json"); r.code != 0 {
		t.Fatalf("plan --out: exit %d\n%s", r.code, r.stderr)
	}

	t.Run("deletes outside the stack added and re-checksummed", func(t *testing.T) {
		edited := filepath.Join(dir, "edited.json")
		editPlanFile(t, plan, edited, false, func(pf *engine.PlanFile) {
			for _, ns := range []*corev1.Namespace{foreign, forged} {
				k := engine.Key{Kind: "Namespace", Name: ns.Name}
				pf.Changes = append(pf.Changes, engine.SavedChange{Address: "tenant.t", Key: k, APIVersion: "v1", Action: engine.ActionDelete})
			}
		})
		r := runWith(t, nil, "apply", edited)
		if r.code != 1 || !strings.Contains(r.stderr, "the saved plan has changes gpuform would not make to stack pftrust") ||
			!strings.Contains(r.stderr, "delete Namespace pftrust-foreign: the refresh under the lock did not find it in stack pftrust") ||
			!strings.Contains(r.stderr, "delete Namespace pftrust-forged: it carries the label gpuform.dev/stack=pftrust, but is not in the stack's inventory") {
			t.Errorf("apply of the edited plan: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "Warning: "+edited+" is not signed") {
			t.Errorf("no warning that the plan is unsigned:\n%s", r.stderr)
		}
		namespaceAlive(t, foreign.Name)
		namespaceAlive(t, forged.Name)
	})

	t.Run("a cycle is refused at once", func(t *testing.T) {
		cyclic := filepath.Join(dir, "cyclic.json")
		editPlanFile(t, plan, cyclic, false, func(pf *engine.PlanFile) {
			k := engine.Key{Kind: "Namespace", Name: "pftrust-0002"}
			obj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": k.Name,
				"labels": map[string]any{engine.LabelStack: "pftrust", engine.LabelManagedBy: engine.ManagedByValue}}}
			pf.Changes = append(pf.Changes, engine.SavedChange{Address: "tenant.t", Key: k, APIVersion: "v1", Action: engine.ActionCreate, After: obj, DependsOn: []engine.Key{k}})
		})
		start := time.Now()
		r := runWith(t, nil, "apply", cyclic)
		if r.code != 1 || !strings.Contains(r.stderr, "in a cycle") || time.Since(start) > 5*time.Second {
			t.Errorf("apply of a cyclic plan: exit %d after %s\n%s", r.code, time.Since(start), r.stderr)
		}
	})

	t.Run("signed with GPUFORM_PLAN_KEY", func(t *testing.T) {
		// The ref both sides run from: a signed plan is bound to it.
		withKey := []string{engine.PlanKeyEnv + "=" + testPlanKey, engine.RefEnv + "=main"}
		src, err := os.ReadFile(filepath.Join(dir, "main.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), bytes.Replace(src, []byte("range(2)"), []byte("range(3)"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := runEnv(t, withKey, "--chdir", dir, "plan", "--out", "signed.json"); r.code != 0 {
			t.Fatalf("plan --out with a key: exit %d\n%s", r.code, r.stderr)
		}
		signed := filepath.Join(dir, "signed.json")
		if b, _ := os.ReadFile(signed); !bytes.Contains(b, []byte(`"signature": "hmac-sha256:`)) || bytes.Contains(b, []byte(testPlanKey)) {
			t.Fatalf("the plan file is not signed, or holds the key:\n%s", b)
		}
		tampered := filepath.Join(dir, "tampered.json")
		editPlanFile(t, signed, tampered, true, func(pf *engine.PlanFile) {
			k := engine.Key{Kind: "Namespace", Name: foreign.Name}
			pf.Changes = append(pf.Changes, engine.SavedChange{Address: "tenant.t", Key: k, APIVersion: "v1", Action: engine.ActionDelete})
		})
		for _, c := range []struct {
			name string
			env  []string
			file string
			want string
		}{
			{"edited, signature kept", withKey, tampered, "signature does not match"},
			{"signed, no key", nil, signed, "the plan file is signed, but no plan key is configured"},
			{"unsigned, with a key", withKey, plan, "the plan file is not signed, but a plan key is configured"},
		} {
			r := runEnv(t, c.env, "apply", c.file)
			if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout+r.stderr, testPlanKey) {
				t.Errorf("%s: exit %d, want 1 with %q\n%s", c.name, r.code, c.want, r.stderr)
			}
		}
		if r := runEnv(t, withKey, "show", tampered); r.code != 1 || !strings.Contains(r.stderr, "signature does not match") {
			t.Errorf("show of the tampered plan: exit %d\n%s", r.code, r.stderr)
		}
		r := runEnv(t, withKey, "apply", signed)
		if r.code != 0 || !strings.Contains(r.stdout, "Apply complete! Resources: 4 added, 0 changed, 0 destroyed.") || strings.Contains(r.stderr, "Warning") {
			t.Errorf("apply of the signed plan: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		namespaceAlive(t, foreign.Name)
	})
}

// migWaitConfig is a stack on the agent MIG backend whose node no agent
// serves: apply waits for a MIG state that never comes.
const migWaitConfig = `gpuform {
  stack       = "migwait"
  mig_backend = "agent"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "migwait" {
  gpu           = "A100-80GB"
  node_selector = { "gpuform.dev/node-group" = "migwait" }
  mig_layout    = mig_layout.halves
}

tenant "migwait" {
  quota "migwait" {
    slices = { "3g.40gb" = 2 }
  }
}
`

// The waits of an apply end on SIGTERM: a saved plan whose Node waits for
// a MIG state that never comes (no agent) stops within a second of SIGTERM,
// says the wait was interrupted, and releases the lock.
func TestSavedPlanSIGTERMDuringMIGWait(t *testing.T) {
	setupCluster(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.CreateNodes(kubeapitest.Context(t), cfg, kubeapitest.GPUNode{
		Name:     "migwait-gpu-0",
		Labels:   map[string]string{"gpuform.dev/node-group": "migwait", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/mig.capable": "true"},
		Capacity: map[string]string{"nvidia.com/gpu": "8"},
	}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(migWaitConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runWith(t, nil, "--chdir", dir, "plan", "--out", "plan.json"); r.code != 0 {
		t.Fatalf("plan --out: exit %d\n%s", r.code, r.stderr)
	}
	cmd, out, errb := gpuformProcess(t, "apply", filepath.Join(dir, "plan.json"))
	waitForOutput(t, out, "Modifying Node migwait-gpu-0", 1)
	time.Sleep(700 * time.Millisecond) // into the wait's polling
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = cmd.Wait()
	stopped := time.Since(start)
	t.Logf("gpuform exited %s after SIGTERM", stopped.Round(time.Millisecond))
	if stopped > time.Second {
		t.Errorf("apply took %s to stop after SIGTERM, want at most 1s", stopped)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit after SIGTERM: %v, want status 1", err)
	}
	if !strings.Contains(errb.String(), "interrupted while its MIG layout changed") {
		t.Errorf("no account of the interrupted wait:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	// A released lock keeps its Lease without a holder (see the lock's fence).
	if holder := lockHolder(t, "migwait"); holder != "" {
		t.Errorf("the lock was not released after SIGTERM: its Lease is held by %q", holder)
	}
}

// Pruning needs more than the stack's label, on the real API server: a
// Namespace someone else created with the stack's labels, and the lock's
// namespace labelled and even server-side applied by field manager
// "gpuform" (both marks forged), survive an apply with --adopt and the
// removal of a tenant, and the plan says why it leaves them; the tenant
// removed is pruned. A tenant cannot name the lock's namespace. Before,
// both namespaces were deleted, the lock's with the Lease inside it.
func TestPruneNeedsMoreThanTheLabelOnTheCluster(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	dir := tenantsConfig(t, "owned", 2)
	applyOK(t, nil, dir)
	labels := map[string]string{engine.LabelStack: "owned", engine.LabelManagedBy: engine.ManagedByValue}
	forged := nsObject("owned-forged")
	forged.Labels = labels
	if _, err := cs.CoreV1().Namespaces().Create(ctx, forged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(engine.LockNamespace).WithLabels(labels), metav1.ApplyOptions{FieldManager: engine.FieldManager, Force: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cs.CoreV1().Namespaces().Apply(context.Background(), corev1ac.Namespace(engine.LockNamespace), metav1.ApplyOptions{FieldManager: engine.FieldManager, Force: true})
	})
	src, err := os.ReadFile(filepath.Join(dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), bytes.Replace(src, []byte("range(2)"), []byte("range(1)"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r := applyOK(t, nil, dir, "--adopt")
	for _, want := range []string{
		"Namespace owned-forged carries the label gpuform.dev/stack=owned, but is not in the stack's inventory: left in place, not deleted",
		"Namespace gpuform-system is the namespace of gpuform's lock",
		"Destruction complete after",
		"Apply complete! Resources: 0 added, 0 changed, 4 destroyed.",
	} {
		if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
			t.Errorf("apply lacks %q:\n%s", want, r.stdout)
		}
	}
	namespaceAlive(t, "owned-forged")
	namespaceAlive(t, engine.LockNamespace)
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, "owned-0001", metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
		t.Error("the removed tenant's namespace was not pruned")
	}

	// A tenant cannot name the lock's namespace: a configuration error at
	// the attribute, before any cluster call.
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), bytes.Replace(src, []byte(`namespace = "owned-${each.key}"`), []byte(`namespace = "gpuform-system"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runWith(t, nil, "--chdir", dir, "apply", "--auto-approve", "--adopt")
	if r.code != 1 || !strings.Contains(r.stderr, "Error: Reserved namespace") || !strings.Contains(r.stderr, "on main.hcl line 17") {
		t.Errorf("a tenant in the lock's namespace: exit %d\n%s", r.code, r.stderr)
	}
}
