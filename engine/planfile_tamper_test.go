package engine_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// savedPlan is the saved plan of examples/name against an empty cluster.
func savedPlan(t *testing.T, name string) []byte {
	t.Helper()
	dir := filepath.Join("..", "examples", name)
	cfg, diags := config.LoadDir(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Diff(d, &engine.Live{Source: "x", ClusterPolicies: []*unstructured.Unstructured{fuzzClusterPolicy("")}}, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := engine.NewPlanFile(p, "test", cfg.Hash, "ctx", false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pf.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// reseal decodes a plan file, lets edit change it and saves it again, which
// recomputes its checksum as anyone editing the file can.
func reseal(t *testing.T, src []byte, edit func(pf *engine.PlanFile)) []byte {
	t.Helper()
	var pf engine.PlanFile
	if err := json.Unmarshal(src, &pf); err != nil {
		t.Fatal(err)
	}
	edit(&pf)
	var buf bytes.Buffer
	if err := pf.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// firstCreate returns the first create of a kind in pf.
func firstCreate(t *testing.T, pf *engine.PlanFile, kind string) *engine.SavedChange {
	t.Helper()
	for i := range pf.Changes {
		if c := &pf.Changes[i]; c.Action == engine.ActionCreate && c.Key.Kind == kind {
			return c
		}
	}
	t.Fatalf("no create of a %s in the plan", kind)
	return nil
}

// TestPlanFileTampering: a saved plan edited after gpuform wrote it is
// refused, with its checksum left, replaced by a valid-looking wrong one, or
// removed; and when the editor recomputes the checksum (it is a SHA-256, not
// a signature), a change gpuform cannot have planned is still refused: an
// object of a kind gpuform does not write, an object other than the one its
// key names, or one outside the stack's labels.
func TestPlanFileTampering(t *testing.T) {
	for _, example := range []string{"quickstart", "bank"} {
		src := savedPlan(t, example)
		if _, err := engine.ReadPlanFile(bytes.NewReader(src)); err != nil {
			t.Fatalf("%s: the untouched plan file is refused: %v", example, err)
		}
		wrongSum := sha256.Sum256([]byte("not this plan"))
		var sum struct{ Checksum string }
		if err := json.Unmarshal(src, &sum); err != nil || len(sum.Checksum) != 64 {
			t.Fatalf("%s: checksum %q, %v", example, sum.Checksum, err)
		}
		cases := []struct {
			name   string
			edited []byte
			want   string
		}{
			{
				name:   "edited-content",
				edited: bytes.Replace(src, []byte(`"gpuform.dev/protect": "true"`), []byte(`"gpuform.dev/protect": "false"`), 1),
				want:   "the checksum does not match its content",
			},
			{
				name:   "valid-looking-wrong-checksum",
				edited: bytes.Replace(src, []byte(sum.Checksum), []byte(hex.EncodeToString(wrongSum[:])), 1),
				want:   "the checksum does not match its content",
			},
			{
				name:   "checksum-removed",
				edited: bytes.Replace(src, []byte(`"checksum": "`+sum.Checksum+`"`), []byte(`"checksum": ""`), 1),
				want:   "the checksum does not match its content",
			},
			{
				name: "recomputed-unwritten-kind",
				edited: reseal(t, src, func(pf *engine.PlanFile) {
					c := firstCreate(t, pf, "Namespace")
					c.Key.Group, c.Key.Kind = "rbac.authorization.k8s.io", "ClusterRoleBinding"
					c.After["apiVersion"], c.After["kind"] = "rbac.authorization.k8s.io/v1", "ClusterRoleBinding"
					c.After["roleRef"] = map[string]any{"kind": "ClusterRole", "name": "cluster-admin"}
				}),
				want: "a change of a ClusterRoleBinding, a kind gpuform does not write",
			},
			{
				name: "recomputed-object-other-than-key",
				edited: reseal(t, src, func(pf *engine.PlanFile) {
					c := firstCreate(t, pf, "Namespace")
					c.After["metadata"].(map[string]any)["name"] = "kube-system"
				}),
				want: "the object it applies is Namespace kube-system, not the one its key names",
			},
			{
				name: "recomputed-object-outside-stack",
				edited: reseal(t, src, func(pf *engine.PlanFile) {
					c := firstCreate(t, pf, "ResourceQuota")
					delete(c.After["metadata"].(map[string]any)["labels"].(map[string]any), engine.LabelStack)
				}),
				want: "is not labelled app.kubernetes.io/managed-by=gpuform and gpuform.dev/stack=",
			},
		}
		cases = append(cases, scopeCases(t, src)...)
		for _, c := range cases {
			t.Run(example+"/"+c.name, func(t *testing.T) {
				if bytes.Equal(c.edited, src) {
					t.Fatal("the edit changed nothing")
				}
				path := filepath.Join(t.TempDir(), "plan.json")
				if err := os.WriteFile(path, c.edited, 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				pf, err := engine.ReadPlanFile(f)
				if err == nil || pf != nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("ReadPlanFile: %v, %v; want a refusal with %q", pf != nil, err, c.want)
				}
			})
		}
	}
}

// nodeChange is a saved change of Node n setting labels and annotations,
// as DiffNodes makes one.
func nodeChange(n string, labels, annotations map[string]any) engine.SavedChange {
	meta := map[string]any{"name": n}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return engine.SavedChange{Address: "pool.x", Key: engine.Key{Kind: "Node", Name: n}, APIVersion: "v1", Action: engine.ActionUpdate,
		After: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta}}
}

// scopeCases are edits of the saved plan src, re-checksummed, that stay
// within the kinds gpuform writes but not within what it sets or how it
// waits: each must be refused when the file is read. Before, each was
// accepted, and apply would have cordoned or relabelled Nodes, changed the
// GPU Operator's driver, labelled a Node with any key as "pending", waited
// forever on a throttle of 0 (or crashed on a negative one), deleted the
// lock's namespace or a Node, or printed a name's terminal escapes raw.
func scopeCases(t *testing.T, src []byte) []struct {
	name   string
	edited []byte
	want   string
} {
	add := func(c engine.SavedChange) func(pf *engine.PlanFile) {
		return func(pf *engine.PlanFile) { pf.Changes = append(pf.Changes, c) }
	}
	unschedulable := nodeChange("gpu-1", map[string]any{engine.LabelPool: "x"}, nil)
	unschedulable.After["spec"] = map[string]any{"unschedulable": true}
	waitOnAnyLabel := nodeChange("gpu-1", map[string]any{engine.LabelMIGConfig: "x"}, nil)
	waitOnAnyLabel.Wait = "node-role.kubernetes.io/control-plane"
	driver := engine.SavedChange{Address: "gpuform", Key: engine.Key{Group: "nvidia.com", Kind: "ClusterPolicy", Name: "cluster-policy"}, APIVersion: "nvidia.com/v1", Action: engine.ActionUpdate,
		After: map[string]any{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": map[string]any{"name": "cluster-policy"},
			"spec": map[string]any{"migManager": map[string]any{"config": map[string]any{"name": engine.MIGPartedConfig}}, "driver": map[string]any{"image": "evil/driver"}}}}
	lockDelete := engine.SavedChange{Address: "tenant.x", Key: engine.Key{Kind: "Namespace", Name: engine.LockNamespace}, APIVersion: "v1", Action: engine.ActionDelete}
	nodeDelete := engine.SavedChange{Address: "pool.x", Key: engine.Key{Kind: "Node", Name: "gpu-1"}, APIVersion: "v1", Action: engine.ActionDelete}
	return []struct {
		name   string
		edited []byte
		want   string
	}{
		{"recomputed-node-spec", reseal(t, src, add(unschedulable)), `it sets "spec" of a Node`},
		{"recomputed-node-foreign-label", reseal(t, src, add(nodeChange("gpu-1", map[string]any{"node-role.kubernetes.io/control-plane": ""}, nil))), `it sets the Node's label "node-role.kubernetes.io/control-plane", which gpuform does not write`},
		{"recomputed-node-foreign-annotation", reseal(t, src, add(nodeChange("gpu-1", nil, map[string]any{"gpuform.dev/mig-state": "success"}))), `the Node's annotation "gpuform.dev/mig-state"`},
		{"recomputed-wait-on-any-label", reseal(t, src, add(waitOnAnyLabel)), `a wait for "node-role.kubernetes.io/control-plane", which is not a Node's MIG state`},
		{"recomputed-clusterpolicy-driver", reseal(t, src, add(driver)), "it sets more of a ClusterPolicy than the ConfigMaps"},
		{"recomputed-throttle-zero", reseal(t, src, func(pf *engine.PlanFile) { pf.Throttles = map[string]int{"pool.x": 0} }), `throttle "pool.x" is 0`},
		{"recomputed-throttle-negative", reseal(t, src, func(pf *engine.PlanFile) { pf.Throttles = map[string]int{"pool.x": -5} }), `throttle "pool.x" is -5`},
		{"recomputed-delete-lock-namespace", reseal(t, src, add(lockDelete)), "a change of the namespace of gpuform's lock"},
		{"recomputed-delete-node", reseal(t, src, add(nodeDelete)), "a delete of a Node; gpuform never creates or deletes one"},
		{"recomputed-name-with-escapes", reseal(t, src, add(engine.SavedChange{Key: engine.Key{Kind: "Namespace", Name: "x\x1b[8m"}, APIVersion: "v1", Action: engine.ActionDelete})), `the object "x\x1b[8m" in namespace "" is not a name gpuform gives`},
	}
}
