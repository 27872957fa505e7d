package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestDRAExamplePlanOnTheAPIServer plans examples/dra (its L40S pool moved
// onto the test cluster's H100 node) on the API server, where NVIDIA's DRA
// driver publishes node a100-0's 8 A100s whole and nothing of a100-1: the
// DRA pool's capacity is a100-0's 8 GPUs under the example's layout (4
// 1g.10gb and one 3g.40gb each), read from the ResourceSlices (one LIST),
// with a warning naming the node that publishes none.
func TestDRAExamplePlanOnTheAPIServer(t *testing.T) {
	setupCluster(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.PublishDRASlices(t.Context(), cfg, kubeapitest.DRANode{Node: "a100-0", Product: "NVIDIA A100-SXM4-80GB", GPUs: 8, MemoryBytes: 80 << 30}); err != nil {
		t.Fatal(err)
	}
	// The other tests' device-plugin pools on a100-0 do not read the slices;
	// they go all the same.
	t.Cleanup(func() {
		cs, err := kubernetes.NewForConfig(cfg)
		if err == nil {
			err = cs.ResourceV1().ResourceSlices().DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		}
		if err != nil {
			t.Errorf("delete the ResourceSlices: %v", err)
		}
	})
	dir := copyExample(t, "dra",
		`gpu           = "L40S"`, `gpu           = "H100-80GB"`,
		`"gpuform.dev/node-group" = "l40s"`, `"gpuform.dev/node-group" = "h100"`,
		"cluster {\n  simulated = \"cluster.sim.hcl\"\n}\n", "")
	var counter kubeapitest.Counter
	r := runWith(t, &counter, "--chdir", dir, "plan", "--detailed-exitcode")
	if r.code != 2 {
		t.Fatalf("plan: exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"  a100  gpuform-dra-a100-1g-10gb.deviceclass.resource.k8s.io/devices  0 -> 32  0 -> 4",
		"  a100  gpuform-dra-a100-3g-40gb.deviceclass.resource.k8s.io/devices  0 -> 8   0 -> 1",
		"Nodes without DRA devices",
		"Pool a100 has mode = \"dra\", but its nodes a100-1 publish no GPU",
	} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("plan lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
	lists := 0
	for _, req := range counter.Requests() {
		if strings.HasPrefix(req, "GET /apis/resource.k8s.io/v1/resourceslices") {
			lists++
		}
	}
	if lists != 1 {
		t.Errorf("%d LISTs of ResourceSlices, want 1", lists)
	}
}
