package kubernetes_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestInventoryOnTheServer: ApplyUID answers the UID the server gave the
// object; the stack's record written twice is read back as its newest
// version, the older one deleted, and in gpuform-system only.
func TestInventoryOnTheServer(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, cs := client(t)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "inv-uid"}}}
	uid, err := c.ApplyUID(ctx, ns, true)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, "inv-uid", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if uid == "" || uid != string(got.UID) {
		t.Fatalf("ApplyUID answered %q, the server has %q", uid, got.UID)
	}
	inv := &engine.Inventory{Stack: "inv", Commit: "c1", Objects: map[engine.Key]engine.InventoryEntry{
		engine.KeyOf(ns): {UID: uid, Commit: "c1", Address: "tenant.a"},
	}}
	if err := c.WriteInventory(ctx, inv); err != nil {
		t.Fatal(err)
	}
	inv.Seq++
	inv.Commit = "c2"
	if err := c.WriteInventory(ctx, inv); err != nil {
		t.Fatal(err)
	}
	live, err := c.Refresh(ctx, &engine.Desired{Stack: "inv", Kinds: engine.ManagedKinds()}, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Inventory == nil || live.Inventory.Seq != 2 || live.Inventory.Commit != "c2" || live.Inventory.Objects[engine.KeyOf(ns)].UID != uid {
		t.Fatalf("record read back: %+v", live.Inventory)
	}
	cms, err := cs.CoreV1().ConfigMaps(engine.LockNamespace).List(ctx, metav1.ListOptions{LabelSelector: "gpuform.dev/inventory=inv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 1 || cms.Items[0].Name != engine.InventoryName("inv", 2, 0) {
		t.Errorf("record's ConfigMaps: %d, want only version 2's shard", len(cms.Items))
	}
}
