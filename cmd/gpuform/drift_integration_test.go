package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// driftOut is the part of drift --json the tests read.
type driftOut struct {
	Stack  string         `json:"stack"`
	Commit string         `json:"commit"`
	InSync bool           `json:"in_sync"`
	Counts map[string]int `json:"counts"`
	Drift  []struct {
		Class         string `json:"class"`
		Kind          string `json:"kind"`
		Namespace     string `json:"namespace"`
		Name          string `json:"name"`
		Action        string `json:"action"`
		AppliedCommit string `json:"applied_commit"`
		Fields        []struct {
			Path   string `json:"path"`
			Before any    `json:"before"`
			After  any    `json:"after"`
		} `json:"fields"`
		Details []string `json:"details"`
	} `json:"drift"`
	Fix *driftOut `json:"fix"`
}

// classes renders the drift items as "class Kind ns/name" lines.
func (d *driftOut) classes() string {
	var out []string
	for _, it := range d.Drift {
		out = append(out, it.Class+" "+it.Kind+" "+it.Namespace+"/"+it.Name)
	}
	return strings.Join(out, "\n")
}

// runDrift runs gpuform drift --json with args and decodes the report.
func runDrift(t *testing.T, counter *kubeapitest.Counter, wantCode int, args ...string) (result, *driftOut) {
	t.Helper()
	r := runWith(t, counter, append([]string{"drift", "--json"}, args...)...)
	if r.code != wantCode {
		t.Fatalf("drift %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, r.code, wantCode, r.stdout, r.stderr)
	}
	var out driftOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("drift --json output is not JSON: %v\n%s", err, r.stdout)
	}
	return r, &out
}

// commitAll stages every file of the work tree and commits at when.
func commitAll(t *testing.T, wt *gogit.Worktree, msg string, when time.Time) string {
	t.Helper()
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(msg, &gogit.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example", When: when}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func wantCounts(t *testing.T, d *driftOut, liveEdit, unapplied, missing, hardware int) {
	t.Helper()
	want := map[string]int{"live-edit": liveEdit, "unapplied": unapplied, "missing": missing, "hardware": hardware}
	for k, v := range want {
		if d.Counts[k] != v {
			t.Errorf("counts = %v, want %v; items:\n%s", d.Counts, want, d.classes())
			return
		}
	}
}

func readMetrics(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantMetrics(t *testing.T, path string, lines ...string) {
	t.Helper()
	got := readMetrics(t, path)
	for _, l := range lines {
		if !strings.Contains(got, l+"\n") {
			t.Errorf("metrics file lacks %q:\n%s", l, got)
		}
	}
	if !strings.Contains(got, "gpuform_drift_last_check_timestamp_seconds{stack=\"drift\"} 1") {
		t.Errorf("metrics file has no last check time:\n%s", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the metrics directory holds %d files; the temporary file was left behind", len(entries))
	}
}

// Drift end to end on the real API server, with the configuration in a
// go-git repository: apply a commit, then a hand edit (live-edit), a
// commit not applied (unapplied), a deleted RoleBinding (missing), --fix,
// a check at an older ref, and a node with other GPUs (hardware).
func TestDriftEndToEnd(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	dir := tenantsConfig(t, "drift", 3)
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	c1 := commitAll(t, wt, "three tenants", time.Unix(1700000000, 0))
	applyOK(t, nil, dir)
	metrics := filepath.Join(t.TempDir(), "gpuform.prom")
	quota := func() map[string]string {
		q, err := cs.CoreV1().ResourceQuotas("drift-0000").Get(ctx, engine.QuotaName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return q.Annotations
	}
	if got := quota()[engine.AnnotCommit]; got != c1 {
		t.Fatalf("apply stamped %q, want the commit %s", got, c1)
	}

	t.Run("in sync after apply", func(t *testing.T) {
		var c kubeapitest.Counter
		_, d := runDrift(t, &c, 0, "--chdir", dir, "--metrics-file", metrics)
		if !d.InSync || d.Stack != "drift" || d.Commit != c1 || len(d.Drift) != 0 {
			t.Errorf("report = %+v", d)
		}
		if m := c.Mutating(); len(m) > 0 {
			t.Errorf("drift wrote to the cluster: %v", m)
		}
		wantMetrics(t, metrics, `gpuform_drift_in_sync{stack="drift"} 1`, `gpuform_drift_objects{stack="drift",class="live-edit"} 0`)
	})

	t.Run("hand-edited quota is a live edit", func(t *testing.T) {
		if _, err := cs.CoreV1().ResourceQuotas("drift-0000").Patch(ctx, engine.QuotaName, types.MergePatchType,
			[]byte(`{"spec":{"hard":{"requests.nvidia.com/gpu":"5"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		var c kubeapitest.Counter
		_, d := runDrift(t, &c, 2, "--chdir", dir, "--metrics-file", metrics)
		wantCounts(t, d, 1, 0, 0, 0)
		if m := c.Mutating(); len(m) > 0 {
			t.Errorf("drift wrote to the cluster: %v", m)
		}
		it := d.Drift[0]
		if it.Class != "live-edit" || it.Kind != "ResourceQuota" || it.Namespace != "drift-0000" || it.AppliedCommit != c1 || it.Action != "update" ||
			len(it.Fields) != 1 || it.Fields[0].Path != `spec.hard["requests.nvidia.com/gpu"]` || it.Fields[0].Before != "5" || it.Fields[0].After != "1" {
			t.Errorf("item = %+v", it)
		}
		wantMetrics(t, metrics,
			`gpuform_drift_objects{stack="drift",class="live-edit"} 1`,
			`gpuform_drift_objects{stack="drift",class="unapplied"} 0`,
			`gpuform_drift_objects{stack="drift",class="missing"} 0`,
			`gpuform_drift_objects{stack="drift",class="hardware"} 0`,
			`gpuform_drift_in_sync{stack="drift"} 0`)
		text := runWith(t, nil, "--chdir", dir, "drift")
		if text.code != 2 || !strings.Contains(text.stdout, "live-edit: changed in the cluster by hand") ||
			!strings.Contains(text.stdout, `~ spec.hard["requests.nvidia.com/gpu"] = "5" -> "1"`) ||
			!strings.Contains(text.stdout, "Drift: 1 live-edit, 0 unapplied, 0 missing, 0 hardware.") {
			t.Errorf("text report (exit %d):\n%s%s", text.code, text.stdout, text.stderr)
		}
	})

	var c2 string
	t.Run("committed change not applied is unapplied", func(t *testing.T) {
		main := filepath.Join(dir, "main.hcl")
		src, _ := os.ReadFile(main)
		if err := os.WriteFile(main, []byte(strings.Replace(string(src), `"s3://models/${each.key}"`, `"s3://models/v2/${each.key}"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		c2 = commitAll(t, wt, "models v2", time.Unix(1700000100, 0))
		_, d := runDrift(t, nil, 2, "--chdir", dir)
		if d.Commit != c2 {
			t.Errorf("report is for %s, want %s", d.Commit, c2)
		}
		wantCounts(t, d, 1, 3, 0, 0)
		for _, it := range d.Drift {
			if it.Class != "unapplied" {
				continue
			}
			if it.Kind != "InferenceService" || it.AppliedCommit != c1 || len(it.Fields) != 1 || it.Fields[0].Path != "spec.predictor.model.storageUri" {
				t.Errorf("unapplied item = %+v", it)
			}
		}
	})

	t.Run("deleted RoleBinding is missing", func(t *testing.T) {
		if err := cs.RbacV1().RoleBindings("drift-0001").Delete(ctx, "gpuform-admins", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, d := runDrift(t, nil, 2, "--chdir", dir, "--metrics-file", metrics)
		wantCounts(t, d, 1, 3, 1, 0)
		found := false
		for _, it := range d.Drift {
			if it.Class == "missing" {
				found = it.Kind == "RoleBinding" && it.Namespace == "drift-0001" && it.Name == "gpuform-admins" && it.Action == "create" && it.AppliedCommit == c1
			}
		}
		if !found {
			t.Errorf("no missing RoleBinding drift-0001/gpuform-admins:\n%s", d.classes())
		}
		wantMetrics(t, metrics, `gpuform_drift_objects{stack="drift",class="missing"} 1`, `gpuform_drift_objects{stack="drift",class="unapplied"} 3`)
		md := runWith(t, nil, "--chdir", dir, "drift", "--format", "markdown")
		if md.code != 2 || !strings.HasPrefix(md.stdout, "<!-- gpuform:drift stack=drift -->\n") || !strings.Contains(md.stdout, "| missing | RoleBinding drift-0001/gpuform-admins |") {
			t.Errorf("markdown report (exit %d):\n%s%s", md.code, md.stdout, md.stderr)
		}
	})

	t.Run("fix converges", func(t *testing.T) {
		r, d := runDrift(t, nil, 0, "--chdir", dir, "--fix", "--metrics-file", metrics)
		wantCounts(t, d, 1, 3, 1, 0)
		if d.Fix == nil || !d.Fix.InSync || d.Fix.Commit != c2 {
			t.Errorf("after --fix: %+v", d.Fix)
		}
		if !strings.Contains(r.stderr, "Apply complete! Resources: 1 added, 4 changed, 0 destroyed.") {
			t.Errorf("--fix progress (stderr):\n%s", r.stderr)
		}
		wantMetrics(t, metrics, `gpuform_drift_in_sync{stack="drift"} 1`, `gpuform_drift_objects{stack="drift",class="missing"} 0`)
		_, d = runDrift(t, nil, 0, "--chdir", dir)
		if !d.InSync {
			t.Errorf("drift after --fix:\n%s", d.classes())
		}
		if got := quota()[engine.AnnotCommit]; got != c2 {
			t.Errorf("the fixed quota is stamped %q, want %s", got, c2)
		}
	})

	t.Run("an older ref is unapplied", func(t *testing.T) {
		_, d := runDrift(t, nil, 2, "--repo", dir, "--ref", c1)
		wantCounts(t, d, 0, 3, 0, 0)
		if d.Commit != c1 {
			t.Errorf("report is for %s, want %s", d.Commit, c1)
		}
		_, d = runDrift(t, nil, 0, "--repo", dir, "--ref", "master")
		if !d.InSync || d.Commit != c2 {
			t.Errorf("drift at master: %+v", d)
		}
	})

	t.Run("other GPUs on a pool's node are hardware", func(t *testing.T) {
		relabel := func(product string) {
			p := `{"metadata":{"labels":{"nvidia.com/gpu.product":"` + product + `"}}}`
			if _, err := cs.CoreV1().Nodes().Patch(ctx, "drift-gpu-0", types.MergePatchType, []byte(p), metav1.PatchOptions{FieldManager: "gpu-feature-discovery"}); err != nil {
				t.Fatal(err)
			}
		}
		relabel("NVIDIA-A100-SXM4-80GB")
		defer relabel("NVIDIA-H100-80GB-HBM3")
		_, d := runDrift(t, nil, 2, "--chdir", dir)
		wantCounts(t, d, 0, 0, 0, 1)
		if it := d.Drift[0]; it.Kind != "Node" || it.Name != "drift-gpu-0" || it.Action != "" || !strings.Contains(strings.Join(it.Details, " "), "has A100-80GB GPUs; pool drift wants H100-80GB") {
			t.Errorf("item = %+v", it)
		}
		// --fix cannot fix hardware: it changes nothing and still exits 2.
		var c kubeapitest.Counter
		r := runWith(t, &c, "--chdir", dir, "drift", "--fix")
		if r.code != 2 || !strings.Contains(r.stdout, "what drifted is hardware, which needs a person") {
			t.Errorf("--fix with hardware drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if m := c.Mutating(); len(m) > 0 {
			t.Errorf("--fix with only hardware drift wrote to the cluster: %v", m)
		}
	})
}
