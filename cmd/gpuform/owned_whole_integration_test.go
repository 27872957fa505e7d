package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestGuardObjectsOwnedWhole checks on the real API server that a field
// another field manager adds to an object that carries a tenant's limits
// (each of which switches its control off: an always-false match condition
// on the runtime-class policy, excluded resources in the priorities
// binding, a scope selector on a tenant's quota) is a plan change and
// live-edit drift, that drift --fix and apply remove it from the server,
// and that a plan after is clean; and that a plain apply, the API server's
// defaults and the quota controller's status make no change.
func TestGuardObjectsOwnedWhole(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	dir := tenantsConfig(t, "whole", 2)
	main := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	withRC := strings.Replace(string(src), "  protect          = false\n", "  protect          = false\n  runtime_class    = \"gvisor\"\n", 1)
	if withRC == string(src) {
		t.Fatal("the tenants' configuration has no protect line to add runtime_class after")
	}
	// A priority no tenant may use, for the priorities policy to refuse.
	withRC += "\npriority \"whole-other\" {\n  value = 50\n}\n"
	if err := os.WriteFile(main, []byte(withRC), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	commitAll(t, wt, "two tenants", time.Unix(1700000000, 0))
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	applyOK(t, nil, dir)
	// pod tries a pod in whole-0000 (a dry run): with the runtime class
	// and priority its tenant may use unless told otherwise, and gpus GPUs.
	pod := func(runtimeClass, priority string, gpus int) func() error {
		return func() error {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: "whole-0000"},
				Spec:       corev1.PodSpec{PriorityClassName: priority, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			}
			if runtimeClass != "" {
				p.Spec.RuntimeClassName = &runtimeClass
			}
			if gpus > 0 {
				q := resource.MustParse(strconv.Itoa(gpus))
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"nvidia.com/gpu": q}, Limits: corev1.ResourceList{"nvidia.com/gpu": q}}
				// On the tenant's pool, as the stack's GPU-pools policy asks.
				p.Spec.NodeSelector = map[string]string{engine.LabelPool: "whole"}
			}
			_, err := cs.CoreV1().Pods("whole-0000").Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}

	planCode := func(t *testing.T) result {
		t.Helper()
		return runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode")
	}
	t.Run("a plain apply, the server's defaults and the quota's status are no change", func(t *testing.T) {
		waitQuotaStatus(ctx, t, cs, "whole-0000")
		if r := planCode(t); r.code != 0 {
			t.Fatalf("plan after apply: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		runDrift(t, nil, 0, "--chdir", dir)
	})

	const (
		rcPolicy   = "gpuform-whole-runtime-classes"
		prioPolicy = "gpuform-whole-priorities"
	)
	cases := []struct {
		name string
		// intrude switches the control off as another field manager.
		intrude func(t *testing.T) error
		kind    string
		ns, obj string
		path    string
		// shown is what the plan shows of it: "- <path>" (removed)
		// unless set.
		shown string
		// gone reports whether the field is absent from the server's object.
		gone func(t *testing.T) (bool, []metav1.ManagedFieldsEntry)
		fix  []string
		// try is a pod the control refuses, and admits once switched off.
		try func() error
	}{
		{
			name: "an always-false match condition on the runtime-class policy",
			intrude: func(t *testing.T) error {
				_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Patch(ctx, rcPolicy, types.ApplyPatchType,
					[]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"`+rcPolicy+`"},"spec":{"matchConditions":[{"name":"never","expression":"false"}]}}`),
					metav1.PatchOptions{FieldManager: "intruder"})
				return err
			},
			kind: "ValidatingAdmissionPolicy", obj: rcPolicy, path: "spec.matchConditions",
			gone: func(t *testing.T) (bool, []metav1.ManagedFieldsEntry) {
				p, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, rcPolicy, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return len(p.Spec.MatchConditions) == 0, p.ManagedFields
			},
			fix: []string{"drift", "--fix"},
			try: pod("", "whole", 0),
		},
		{
			name: "pods excluded from the priorities binding",
			intrude: func(t *testing.T) error {
				// matchResources is atomic: the intruder forces its own,
				// gpuform's selector kept and pods excluded.
				force := true
				_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Patch(ctx, prioPolicy, types.ApplyPatchType,
					[]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"`+prioPolicy+`"},"spec":{"matchResources":{"namespaceSelector":{"matchLabels":{"gpuform.dev/stack":"whole"}},"excludeResourceRules":[{"apiGroups":[""],"apiVersions":["*"],"operations":["*"],"resources":["pods"]}]}}}`),
					metav1.PatchOptions{FieldManager: "intruder", Force: &force})
				return err
			},
			kind: "ValidatingAdmissionPolicyBinding", obj: prioPolicy, path: "spec.matchResources",
			// the forced value against gpuform's, field by field
			shown: "- spec.matchResources.excludeResourceRules[0].resources = [\"pods\"] -> null",
			gone: func(t *testing.T) (bool, []metav1.ManagedFieldsEntry) {
				b, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, prioPolicy, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return b.Spec.MatchResources == nil || len(b.Spec.MatchResources.ExcludeResourceRules) == 0, b.ManagedFields
			},
			fix: []string{"apply", "--auto-approve"},
			try: pod("gvisor", "whole-other", 0),
		},
		{
			name: "a scope selector on a tenant's quota, written as kubectl edits",
			intrude: func(t *testing.T) error {
				_, err := cs.CoreV1().ResourceQuotas("whole-0000").Patch(ctx, engine.QuotaName, types.MergePatchType,
					[]byte(`{"spec":{"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["nothing-uses-this"]}]}}}`),
					metav1.PatchOptions{FieldManager: "kubectl-edit"})
				return err
			},
			kind: "ResourceQuota", ns: "whole-0000", obj: engine.QuotaName, path: "spec.scopeSelector",
			gone: func(t *testing.T) (bool, []metav1.ManagedFieldsEntry) {
				q, err := cs.CoreV1().ResourceQuotas("whole-0000").Get(ctx, engine.QuotaName, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return q.Spec.ScopeSelector == nil, q.ManagedFields
			},
			fix: []string{"drift", "--fix"},
			try: pod("gvisor", "whole", 8),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			waitAdmission(t, "before the intrusion", tc.try, false)
			if err := tc.intrude(t); err != nil {
				t.Fatal(err)
			}
			if gone, _ := tc.gone(t); gone {
				t.Fatal("the intrusion did not reach the server")
			}
			waitAdmission(t, "with the intrusion", tc.try, true)
			shown := tc.shown
			if shown == "" {
				shown = "- " + tc.path
			}
			r := planCode(t)
			if r.code != 2 || !strings.Contains(r.stdout, shown) {
				t.Errorf("plan: exit %d, want 2 showing %q\n%s%s", r.code, shown, r.stdout, r.stderr)
			}
			_, d := runDrift(t, nil, 2, "--chdir", dir)
			wantCounts(t, d, 1, 0, 0, 0)
			if len(d.Drift) == 1 {
				it := d.Drift[0]
				if it.Class != "live-edit" || it.Kind != tc.kind || it.Namespace != tc.ns || it.Name != tc.obj || len(it.Fields) != 1 || it.Fields[0].Path != tc.path {
					t.Errorf("drift item = %+v, want the live edit of %s", it, tc.path)
				}
			}
			if r := runWith(t, nil, append([]string{"--chdir", dir}, tc.fix...)...); r.code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", tc.fix, r.code, r.stdout, r.stderr)
			}
			gone, managed := tc.gone(t)
			if !gone {
				t.Errorf("%s is still on the server after %v", tc.path, tc.fix)
			}
			ours := false
			for _, e := range managed {
				switch {
				case e.Manager == engine.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply:
					ours = true
				case e.Subresource == "status":
				default:
					t.Errorf("a managedFields entry is left besides gpuform's apply: %s %s %s", e.Manager, e.Operation, e.FieldsV1.String())
				}
			}
			if !ours {
				t.Errorf("gpuform's apply entry is gone: %+v", managed)
			}
			if r := planCode(t); r.code != 0 {
				t.Errorf("plan after %v: exit %d, want 0\n%s%s", tc.fix, r.code, r.stdout, r.stderr)
			}
			runDrift(t, nil, 0, "--chdir", dir)
			waitAdmission(t, "after "+strings.Join(tc.fix, " "), tc.try, false)
		})
	}
}

// waitAdmission waits until try's pod is admitted (admitted) or refused:
// the API server enforces an admission policy or quota a moment after it
// is written.
func waitAdmission(t *testing.T, when string, try func() error, admitted bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := try()
		if (err == nil) == admitted {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the pod was still not %s after 60s (last error: %v)", when, map[bool]string{true: "admitted", false: "refused"}[admitted], err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitQuotaStatus waits until the quota controller has written the status
// of the stack's ResourceQuota in namespace ns.
func waitQuotaStatus(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, engine.QuotaName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Status.Hard) > 0 {
			for _, e := range q.ManagedFields {
				if e.Subresource == "status" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota controller wrote no status of %s/%s in 60s", ns, engine.QuotaName)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
