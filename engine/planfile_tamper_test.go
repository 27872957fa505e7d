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
