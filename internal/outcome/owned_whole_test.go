package outcome

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// wholeConfig is a Kueue stack of one tenant on a whole-GPU pool.
const wholeConfig = `
gpuform {
  stack     = "wholekq"
  scheduler = "kueue"
}

priority "wholekq" {
  value = 10
}

pool "wholekq-h100" {
  gpu           = "H100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "wholekq-h100" }
}

tenant "wholekq" {
  quota "wholekq-h100" {
    gpus = 1
  }
  cpu              = "4"
  memory           = "16Gi"
  priorities       = [priority.wholekq]
  default_priority = priority.wholekq
  protect          = false
}
`

// TestKueueLeavesGuardObjectsWhole: once the real Kueue controller has
// taken up a stack's ClusterQueue and LocalQueue (its finalizers, its
// status, its webhook's defaults) and the quota controller its quota's
// status, a plan has no change: gpuform owns these kinds whole, and what
// Kueue and the API server write is not another manager's field of their
// content.
func TestKueueLeavesGuardObjectsWhole(t *testing.T) {
	createNodes(t, gpuNode("wholekq-h100-0", "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "wholekq-h100"}, map[string]string{"nvidia.com/gpu": "1"}))
	apply(t, wholeConfig)
	cq := func() (bool, string) {
		u := get(t, clusterQueueGVR, "", "wholekq")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return len(u.GetFinalizers()) > 0 && len(conds) > 0, fmt.Sprintf("finalizers %v, conditions %v", u.GetFinalizers(), conds)
	}
	eventually(t, "Kueue took up the ClusterQueue", cq)
	eventually(t, "Kueue took up the LocalQueue", func() (bool, string) {
		u := get(t, localQueueGVR, "wholekq", engine.LocalQueueName)
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return len(conds) > 0, fmt.Sprintf("conditions %v", conds)
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(wholeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := kube.NewForConfig(rest.CopyConfig(restCfg), "kubeapi", kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := stack.New(stack.Dir(dir), stack.Using(kube.StackCluster(client)), stack.Options{}).Plan(ctx, stack.PlanOptions{})
	if err != nil {
		t.Fatalf("gpuform plan: %v", err)
	}
	for _, c := range res.Plan.Changes {
		t.Errorf("plan after apply: %s %s %v", c.Action, c.Key, c.Fields)
	}
	if res.Plan.Summary.Unchanged == 0 {
		t.Error("the plan counted no object unchanged")
	}
}

var (
	clusterQueueGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	localQueueGVR   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
)
