package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// previewBase is the bank scenario (examples/bank) under names of its own,
// so that it meets no other test's objects: stack pv-bank, its own GPU
// nodes, and the agent MIG backend (the GPU Operator's ConfigMaps are
// cluster singletons that other tests' stacks own).
const previewBase = `gpuform {
  stack       = "pv-bank"
  scheduler   = "kueue"
  mig_backend = "agent"
}

variable "risk_slices" {
  type        = number
  default     = 2
  description = "3g.40gb slices reserved for the risk team."
}

variable "model_bucket" {
  type    = string
  default = "s3://pv-bank-models"
}

priority "pvrealtime" {
  value       = 1000000
  preemption  = "PreemptLowerPriority"
  description = "latency-critical inference"
}

priority "pvbatch" {
  value      = 1000
  preemption = "Never"
}

mig_layout "balanced" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }
}

pool "pva100" {
  gpu             = "A100-80GB"
  node_selector   = { "gpuform.dev/node-group" = "pv-a100" }
  mig_layout      = mig_layout.balanced
  max_unavailable = 1
}

pool "pvh100" {
  gpu           = "NVIDIA-H100-80GB-HBM3"
  node_selector = { "gpuform.dev/node-group" = "pv-h100" }
}

tenant "pvrisk" {
  labels = { team = "risk" }
  quota "pva100" {
    slices = { "3g.40gb" = var.risk_slices, "1g.10gb" = 2 }
  }
  cohort           = "pv-bank"
  priorities       = [priority.pvrealtime, priority.pvbatch]
  default_priority = priority.pvbatch
  admins           = ["group:risk-admins"]
}

tenant "pvocr" {
  labels = { team = "ocr" }
  quota "pvh100" {
    gpus = 2
  }
  cohort           = "pv-bank"
  priorities       = [priority.pvbatch]
  default_priority = priority.pvbatch
  admins           = ["group:ocr-admins"]
}

model "fraud-detector" {
  tenant      = tenant.pvrisk
  pool        = pool.pva100
  slice       = "3g.40gb"
  format      = "pytorch"
  storage_uri = "${var.model_bucket}/fraud/v3"
  replicas    = { min = 1, max = 2 }
  priority    = priority.pvrealtime
}

model "invoice-reader" {
  tenant      = tenant.pvocr
  pool        = pool.pvh100
  gpus        = 1
  format      = "onnx"
  storage_uri = "${var.model_bucket}/ocr/v2"
  priority    = priority.pvbatch
}
`

// previewSecret is the sensitive variable's value on the feature branch:
// it must appear in no output.
const previewSecret = "s3://pv-secret-bucket-7c1e"

// previewFeature is the pull request: the ocr tenant renamed to docs (a
// new namespace: remove + add), the MIG layout changed to two 3g.40gb per
// GPU (both A100 nodes re-partitioned), and the model bucket made a
// sensitive variable with a new value.
var previewFeature = []string{
	`tenant "pvocr" {`, `tenant "pvdocs" {`,
	`tenant      = tenant.pvocr`, `tenant      = tenant.pvdocs`,
	`slices = { "1g.10gb" = 2, "2g.20gb" = 1, "3g.40gb" = 1 }`, `slices = { "3g.40gb" = 2 }`,
	`slices = { "3g.40gb" = var.risk_slices, "1g.10gb" = 2 }`, `slices = { "3g.40gb" = var.risk_slices }`,
	`  default = "s3://pv-bank-models"`, `  default   = "` + previewSecret + `"` + "\n  sensitive = true",
}

func replaceAll(t *testing.T, text string, replace ...string) string {
	t.Helper()
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			t.Fatalf("no %q to replace", replace[i])
		}
		text = strings.ReplaceAll(text, replace[i], replace[i+1])
	}
	return text
}

// commitConfig writes main.hcl into the repository at root and commits it.
func commitConfig(t *testing.T, wt *gogit.Worktree, root, src, msg string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("main.hcl"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(msg, &gogit.CommitOptions{Author: &object.Signature{Name: "gpuform test", Email: "test@gpuform.dev", When: time.Unix(1700000000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// playAgent stands in for the gpuform agent on the preview's A100 nodes
// until the test ends: a MIG state "pending" turns "success".
func playAgent(t *testing.T, cs *kubernetes.Clientset, selector string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err == nil {
				for i := range nodes.Items {
					n := &nodes.Items[i]
					if n.Annotations[agentv1.AnnotMIGState] != "pending" {
						continue
					}
					n.Annotations[agentv1.AnnotMIGState] = "success"
					_, _ = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "gpuform-agent"})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// PR preview end to end on the real API server: a go-git repository with
// the bank scenario committed on main and applied; a feature branch that
// renames a tenant, changes the MIG layout and sets a sensitive variable;
// plan --base shows the semantic config diff, the live plan and the
// capacity before and after (golden Markdown and text), and the sensitive
// value appears nowhere.
func TestPreviewPullRequest(t *testing.T) {
	setupCluster(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	a100 := map[string]string{"gpuform.dev/node-group": "pv-a100", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/mig.capable": "true"}
	var nodes []kubeapitest.GPUNode
	for _, name := range []string{"pv-a100-0", "pv-a100-1"} {
		nodes = append(nodes, kubeapitest.GPUNode{Name: name, Labels: a100, Capacity: map[string]string{"nvidia.com/gpu": "8", "cpu": "128", "memory": "1Ti"}})
	}
	nodes = append(nodes, kubeapitest.GPUNode{
		Name:     "pv-h100-0",
		Labels:   map[string]string{"gpuform.dev/node-group": "pv-h100", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"},
		Capacity: map[string]string{"nvidia.com/gpu": "8", "cpu": "128", "memory": "1Ti"},
	})
	if err := kubeapitest.CreateNodes(context.Background(), cfg, nodes...); err != nil {
		t.Fatal(err)
	}
	playAgent(t, clientset(t), "gpuform.dev/node-group=pv-a100")

	dir := t.TempDir()
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	mainCommit := commitConfig(t, wt, dir, previewBase, "The bank on main")
	applyOK(t, nil, dir)
	if err := wt.Checkout(&gogit.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	featureSrc := replaceAll(t, previewBase, previewFeature...)
	featureCommit := commitConfig(t, wt, dir, featureSrc, "Rename ocr to docs, halve the A100s, hide the bucket")

	// norm makes outputs comparable between runs: the server's port and
	// the commits' hashes.
	norm := func(s string) string {
		s = normalize(s)
		for name, h := range map[string]string{"MAIN": mainCommit, "FEATURE": featureCommit} {
			s = strings.ReplaceAll(s, h, "<"+name+">")
			s = strings.ReplaceAll(s, h[:12], "<"+name+">")
		}
		return s
	}
	var outputs []string
	run := func(t *testing.T, want int, args ...string) result {
		t.Helper()
		r := runWith(t, nil, append([]string{"--chdir", dir}, args...)...)
		outputs = append(outputs, r.stdout, r.stderr)
		if r.code != want {
			t.Fatalf("gpuform %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
		}
		return r
	}
	goldenDir := filepath.Join("..", "..", "testdata", "preview")

	t.Run("markdown", func(t *testing.T) {
		r := run(t, 2, "plan", "--base", mainCommit, "--format", "markdown", "--detailed-exitcode")
		golden(t, filepath.Join(goldenDir, "bank-feature.md"), norm(r.stdout))
		for _, want := range []string{
			"<!-- gpuform comment 1/1 -->\n<!-- gpuform:stack=pv-bank part=1/1 -->\n### gpuform plan for stack `pv-bank`\n\n**Plan: ",
			"· MIG: 2 nodes re-partitioned · capacity OK**",
			"- tenant.pvocr: ", "(deleting namespace pvocr deletes everything in it)",
			"+ tenant.pvdocs\n", "- tenant.pvocr\n",
			"~ mig_layout.balanced\n",
			`~     value = (sensitive) -> (sensitive)`,
			"| `-` | Namespace pvocr | `tenant.pvocr` |",
			"| `+` | Namespace pvdocs | `tenant.pvdocs` |",
			"| pva100 | `nvidia.com/mig-3g.40gb` | 16 → 32 |",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the preview lacks %q", want)
			}
		}
		byName := run(t, 2, "plan", "--base", "main", "--format", "markdown", "--detailed-exitcode")
		if got, want := strings.Replace(byName.stdout, "compared with base `main` at ", "compared with base ", 1), r.stdout; got != want {
			t.Errorf("--base main and --base %s differ:\n%s", mainCommit, byName.stdout)
		}
	})

	t.Run("text", func(t *testing.T) {
		r := run(t, 2, "plan", "--base", "main", "--detailed-exitcode")
		golden(t, filepath.Join(goldenDir, "bank-feature.txt"), norm(r.stdout))
	})

	t.Run("json", func(t *testing.T) {
		r := run(t, 0, "plan", "--base", "main", "--json")
		var j struct {
			ConfigSource   engine.ConfigSource  `json:"config_source"`
			BaseSource     engine.ConfigSource  `json:"base_source"`
			ConfigChanges  []engine.BlockChange `json:"config_changes"`
			CapacityBefore []capacity.Row       `json:"capacity_before"`
			Capacity       []capacity.Row       `json:"capacity"`
			Warnings       []string             `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if j.ConfigSource.Commit != featureCommit || j.ConfigSource.Dirty || j.BaseSource.Commit != mainCommit || j.BaseSource.Ref != "main" {
			t.Errorf("sources: %+v, base %+v", j.ConfigSource, j.BaseSource)
		}
		actions := map[string]engine.Action{}
		for _, c := range j.ConfigChanges {
			actions[c.Address] = c.Action
		}
		for addr, want := range map[string]engine.Action{"tenant.pvocr": engine.ActionDelete, "tenant.pvdocs": engine.ActionCreate, "mig_layout.balanced": engine.ActionUpdate, "var.model_bucket": engine.ActionUpdate, "model.invoice-reader": engine.ActionUpdate} {
			if actions[addr] != want {
				t.Errorf("config_changes: %s is %q, want %q", addr, actions[addr], want)
			}
		}
		before := map[string]int{}
		for _, row := range j.CapacityBefore {
			before[row.Pool+" "+row.Resource] = row.Total
		}
		if before["pva100 nvidia.com/mig-1g.10gb"] != 32 || before["pva100 nvidia.com/mig-3g.40gb"] != 16 || len(j.Capacity) == 0 {
			t.Errorf("capacity_before: %+v", j.CapacityBefore)
		}
		if !strings.Contains(strings.Join(j.Warnings, "\n"), "protected tenants: pvocr (tenant.pvocr)") {
			t.Errorf("no warning that apply needs --allow-destroy: %q", j.Warnings)
		}
		// plan --ref plans the configuration at a ref and says so.
		atMain := run(t, 0, "plan", "--ref", "main", "--json")
		if !strings.Contains(atMain.stdout, `"config_source": {`+"\n    \"ref\": \"main\",\n    \"commit\": \""+mainCommit+"\",\n    \"dirty\": false\n  }") || !strings.Contains(atMain.stdout, `"destroy": 0`) {
			t.Errorf("plan --ref main:\n%s", atMain.stdout)
		}
	})

	t.Run("comments to a directory", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "comments")
		stale := filepath.Join(out, "comment-7.md")
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, 0, "plan", "--base", "main", "--format", "markdown", "--out-dir", out)
		if r.stdout != "Wrote 1 comment to "+out+".\n" {
			t.Errorf("stdout: %q", r.stdout)
		}
		c, err := os.ReadFile(filepath.Join(out, "comment-1.md"))
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(c))
		if !strings.HasPrefix(string(c), "<!-- gpuform:stack=pv-bank part=1/1 -->\n") || !strings.Contains(string(c), "MIG: 2 nodes re-partitioned") {
			t.Errorf("comment-1.md:\n%s", c)
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Errorf("a stale comment of an earlier run was kept")
		}
		if r := runWith(t, nil, "--chdir", dir, "plan", "--out-dir", out); r.code != 1 || !strings.Contains(r.stderr, "--out-dir") {
			t.Errorf("--out-dir without --base: exit %d, %s", r.code, r.stderr)
		}
	})

	t.Run("dirty work tree and saved plan", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(featureSrc+"# uncommitted\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, 0, "plan", "--base", "main")
		if !strings.HasPrefix(r.stdout, "Configuration: working directory at "+featureCommit[:12]+" (with uncommitted changes)\nBase:          main at "+mainCommit[:12]+"\n") {
			t.Errorf("the header does not say the tree is dirty:\n%.300s", r.stdout)
		}
		plain := run(t, 0, "plan", "--out", "pr.plan", "--allow-sensitive-in-plan")
		if !strings.HasPrefix(plain.stdout, "Configuration: working directory at "+featureCommit[:12]+" (with uncommitted changes)\n\n") {
			t.Errorf("plan's text does not start with the configuration's source:\n%.300s", plain.stdout)
		}
		var pf struct {
			ConfigSource *engine.ConfigSource `json:"config_source"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "pr.plan"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &pf); err != nil || pf.ConfigSource == nil || pf.ConfigSource.Commit != featureCommit || !pf.ConfigSource.Dirty {
			t.Errorf("the plan file's config_source: %+v (%v)", pf.ConfigSource, err)
		}
		show := run(t, 0, "show", "pr.plan")
		if !strings.HasPrefix(show.stdout, "Configuration: working directory at "+featureCommit[:12]+" (with uncommitted changes)\n") {
			t.Errorf("show does not name the source:\n%.300s", show.stdout)
		}
		j := run(t, 0, "plan", "--json")
		if !strings.Contains(j.stdout, `"config_source": {`+"\n    \"commit\": \""+featureCommit+"\",\n    \"dirty\": true\n  }") {
			t.Errorf("plan --json lacks config_source:\n%s", j.stdout)
		}
	})

	t.Run("over quota still previews, and exits 1", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(featureSrc, "default     = 2", "default     = 40", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, 1, "plan", "--base", "main", "--format", "markdown")
		for _, want := range []string{"· capacity: over quota on pool pva100**", "- Tenants' quotas on pool pva100 claim 40 of nvidia.com/mig-3g.40gb", "⚠️ over quota (limit 32)", "~     value = 2 -> 40"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the preview lacks %q:\n%s", want, r.stdout)
			}
		}
		if !strings.Contains(r.stderr, "Quotas exceed the pool's capacity") {
			t.Errorf("stderr:\n%s", r.stderr)
		}
	})

	t.Run("base that does not load", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(featureSrc), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, 0, "plan", "--base", "no-such-branch", "--format", "markdown")
		if !strings.Contains(r.stdout, "the base configuration could not be read, so every block shows as added") || !strings.Contains(r.stdout, "+ tenant.pvrisk\n") {
			t.Errorf("preview against a missing base:\n%s", r.stdout)
		}
	})

	for _, out := range outputs {
		if strings.Contains(out, previewSecret) || strings.Contains(out, "pv-secret-bucket") {
			t.Errorf("the sensitive value appears in an output:\n%s", out)
		}
	}
}
