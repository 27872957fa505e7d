package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestPriorityAdmission checks on the real API server that the stack's
// priorities policy enforces each tenant's priorities, read from its
// Namespace: allowed and absent priority classes pass, others are denied
// with a message naming the tenant, a tenant without priorities may use
// the stack's priorities but never a system-* class, and namespaces
// outside gpuform are left alone.
func TestPriorityAdmission(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "adm", 2)
	extra := `
priority "adm-other" {
  value = 50
}

tenant "free" {
  namespace = "adm-free"
  admins    = ["group:free"]
}
`
	f, err := os.OpenFile(filepath.Join(dir, "main.hcl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	f.Close()
	applyOK(t, nil, dir)

	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tryPod := func(ns, priority string) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: ns},
			Spec: corev1.PodSpec{
				PriorityClassName: priority,
				Containers:        []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	// The policy reaches the API server's admission chain asynchronously.
	deadline := time.Now().Add(60 * time.Second)
	var denied error
	for denied = tryPod("adm-0000", "adm-other"); denied == nil && time.Now().Before(deadline); denied = tryPod("adm-0000", "adm-other") {
		time.Sleep(200 * time.Millisecond)
	}
	if denied == nil {
		t.Fatal("a pod with a priority class its tenant does not list was admitted")
	}
	want := `priority class adm-other is not among the priorities of namespace adm-0000 (adm; gpuform tenant.t["0000"])`
	if !strings.Contains(denied.Error(), want) {
		t.Errorf("denial = %q, want it to contain %q", denied, want)
	}
	tests := []struct {
		ns, priority string
		allowed      bool
	}{
		{"adm-0001", "adm-other", false},
		{"adm-0000", "adm", true},
		{"adm-0001", "adm", true},
		{"adm-0000", "", true},
		{"adm-free", "adm-other", true},
		{"adm-free", "system-node-critical", false},
		{"adm-0000", "system-cluster-critical", false},
		{"default", "adm-other", true},
	}
	for _, tt := range tests {
		err := tryPod(tt.ns, tt.priority)
		if tt.allowed && err != nil {
			t.Errorf("pod in %s with priority %q: %v, want admitted", tt.ns, tt.priority, err)
		}
		if !tt.allowed && err == nil {
			t.Errorf("pod in %s with priority %q admitted, want denied", tt.ns, tt.priority)
		}
	}
	// One policy per rule (priorities, GPU pools, device classes) serves
	// the whole stack.
	vaps, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{LabelSelector: "gpuform.dev/stack=adm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vaps.Items) != 3 {
		t.Errorf("stack adm has %d ValidatingAdmissionPolicies, want 3", len(vaps.Items))
	}
}
