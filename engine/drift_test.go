package engine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// Commits of the drift tests' history: c1 was applied, c2 is newer.
const (
	c1 = "1111111111111111111111111111111111111111"
	c2 = "2222222222222222222222222222222222222222"
)

// driftSrc is a stack with a MIG pool (A100, layout of 7 x 1g.10gb, driver
// >= 535), a whole-GPU pool and two tenants; replace edits it.
const driftSrc = `
gpuform { stack = "d" }
variable "secret_cpu" {
  type      = string
  default   = "8"
  sensitive = true
}
mig_layout "sevens" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 7 }
}
pool "a100" {
  gpu            = "A100-80GB"
  node_selector  = { "gpuform.dev/node-group" = "a100" }
  mig_layout     = mig_layout.sevens
  driver_version = ">= 535"
  overcommit     = 4
}
pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "h100" }
  overcommit    = 4
}
tenant "a" {
  quota "h100" {
    gpus = 2
  }
  admins  = ["group:a"]
  protect = false
}
tenant "b" {
  quota "h100" {
    gpus = 1
  }
  admins  = ["group:b"]
  protect = false
}
tenant "s" {
  cpu     = var.secret_cpu
  protect = false
}
`

// driftConfig loads driftSrc with replacements (old, new pairs).
func driftConfig(t *testing.T, replace ...string) (*config.Config, *engine.Desired) {
	t.Helper()
	src := driftSrc
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(src, replace[i]) {
			t.Fatalf("driftSrc has no %q", replace[i])
		}
		src = strings.Replace(src, replace[i], replace[i+1], 1)
	}
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
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
	return cfg, d
}

// stamped compiles and stamps.
func stamped(t *testing.T, commit string, replace ...string) (*config.Config, *engine.Desired) {
	cfg, d := driftConfig(t, replace...)
	d.StampCommit(commit)
	return cfg, d
}

// poolNode is a node of a pool as gpuform and the GPU stack left it:
// GPU Feature Discovery labels, the pool's labels, MIG state success.
func poolNode(t *testing.T, d *engine.Desired, pool, name, product string, gpus int, driver string) *unstructured.Unstructured {
	t.Helper()
	var np *engine.NodePool
	for _, p := range d.Pools {
		if p.Pool == pool {
			np = p
		}
	}
	n := gpuNode(name, pool, product, gpus, driver)
	labels := n.GetLabels()
	for k, v := range np.Labels {
		labels[k] = v
	}
	if np.MIGState == engine.LabelMIGState {
		labels[engine.LabelMIGState] = "success"
	}
	n.SetLabels(labels)
	return n
}

// driftLive is the cluster after d was applied, with an A100 and an H100 node.
func driftLive(t *testing.T, d *engine.Desired) *engine.Live {
	live := applied(t, d)
	live.Nodes = []*unstructured.Unstructured{
		poolNode(t, d, "a100", "a100-0", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
		poolNode(t, d, "h100", "h100-0", "NVIDIA-H100-80GB-HBM3", 8, "550.54.15"),
	}
	return live
}

func checkDrift(t *testing.T, cfg *config.Config, d *engine.Desired, live *engine.Live, ref string, applied ...engine.AppliedConfig) *engine.DriftReport {
	t.Helper()
	p := mustDiff(t, d, live, engine.DiffOptions{})
	return engine.Drift(p, d, live, ref, engine.DriftOptions{Applied: applied, Config: cfg, Catalog: mig.Default()})
}

// items returns the report's items as "class kind ns/name" strings.
func items(r *engine.DriftReport) []string {
	var out []string
	for _, it := range r.Items {
		out = append(out, string(it.Class)+" "+it.Key().String())
	}
	return out
}

func wantItems(t *testing.T, r *engine.DriftReport, want ...string) {
	t.Helper()
	if got := strings.Join(items(r), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("drift items:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func item(t *testing.T, r *engine.DriftReport, class engine.DriftClass, key string) engine.DriftItem {
	t.Helper()
	for _, it := range r.Items {
		if it.Class == class && it.Key().String() == key {
			return it
		}
	}
	t.Fatalf("no %s item for %s in %v", class, key, items(r))
	return engine.DriftItem{}
}

func paths(it engine.DriftItem) string {
	var out []string
	for _, f := range it.Fields {
		out = append(out, f.Path)
	}
	return strings.Join(out, ",")
}

func quota(live *engine.Live, ns string) *unstructured.Unstructured {
	return live.Objects[engine.Key{Kind: "ResourceQuota", Namespace: ns, Name: engine.QuotaName}]
}

const gpuPath = `spec.hard["requests.nvidia.com/gpu"]`

func TestDriftInSync(t *testing.T) {
	cfg, d := stamped(t, c1)
	r := checkDrift(t, cfg, d, driftLive(t, d), c1)
	if !r.InSync() || len(r.Warnings) != 0 {
		t.Fatalf("applied cluster: items %v, warnings %v", items(r), r.Warnings)
	}
	for _, c := range engine.DriftClasses {
		if n, ok := r.Counts()[c]; !ok || n != 0 {
			t.Errorf("count of %s = %d, %v", c, n, ok)
		}
	}
	// A newer commit that changes nothing of the objects is in sync too:
	// apply does not restamp unchanged objects.
	cfg2, d2 := stamped(t, c2)
	if r := checkDrift(t, cfg2, d2, driftLive(t, d), c2); !r.InSync() {
		t.Errorf("a no-op commit drifts: %v", items(r))
	}
}

func TestDriftLiveEdit(t *testing.T) {
	cfg, d := stamped(t, c1)
	live := driftLive(t, d)
	_ = unstructured.SetNestedField(quota(live, "a").Object, "5", "spec", "hard", "requests.nvidia.com/gpu")
	r := checkDrift(t, cfg, d, live, c1)
	wantItems(t, r, "live-edit ResourceQuota a/gpuform")
	it := r.Items[0]
	if paths(it) != gpuPath || it.Fields[0].Before != "5" || it.Fields[0].After != "2" || it.Action != engine.ActionUpdate || it.AppliedCommit != c1 || it.Address != "tenant.a" {
		t.Errorf("item = %+v", it)
	}
	// Without git (no ref commit, no stamps) drift cannot tell, and says so.
	_, bare := driftConfig(t)
	live = driftLive(t, bare)
	_ = unstructured.SetNestedField(quota(live, "a").Object, "5", "spec", "hard", "requests.nvidia.com/gpu")
	r = checkDrift(t, cfg, bare, live, "")
	wantItems(t, r, "unapplied ResourceQuota a/gpuform")
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "not in a git repository") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

// With the configuration at the stamp, each field is attributed: live
// equals what was applied (unapplied) or not (live-edit).
func TestDriftUnappliedAndLiveEditFieldByField(t *testing.T) {
	_, d1 := stamped(t, c1)
	cfg2, d2 := stamped(t, c2, "gpus = 2", "gpus = 3", "admins  = [\"group:b\"]", "admins  = [\"group:b\"]\n  cpu = \"8\"")
	live := driftLive(t, d1)
	_ = unstructured.SetNestedField(quota(live, "b").Object, "4", "spec", "hard", "requests.nvidia.com/gpu")
	r := checkDrift(t, cfg2, d2, live, c2, engine.AppliedConfig{Commit: c2, Desired: d2}, engine.AppliedConfig{Commit: c1, Desired: d1})
	wantItems(t, r,
		"live-edit ResourceQuota b/gpuform",
		"unapplied ResourceQuota a/gpuform",
		"unapplied ResourceQuota b/gpuform")
	if it := item(t, r, engine.DriftLiveEdit, "ResourceQuota b/gpuform"); paths(it) != gpuPath || it.Fields[0].Before != "4" || it.Fields[0].After != "1" {
		t.Errorf("hand edit of b: %+v", it.Fields)
	}
	if it := item(t, r, engine.DriftUnapplied, "ResourceQuota b/gpuform"); paths(it) != `spec.hard["requests.cpu"]` || it.AppliedCommit != c1 {
		t.Errorf("unapplied change of b: %+v", it)
	}
	if it := item(t, r, engine.DriftUnapplied, "ResourceQuota a/gpuform"); paths(it) != gpuPath || it.Fields[0].Before != "2" || it.Fields[0].After != "3" {
		t.Errorf("unapplied change of a: %+v", it.Fields)
	}
	// Without the configuration at c1, the stamps alone say unapplied.
	r = checkDrift(t, cfg2, d2, live, c2)
	wantItems(t, r, "unapplied ResourceQuota a/gpuform", "unapplied ResourceQuota b/gpuform")
	// A hand edit on an object the newer commit did not change is a live
	// edit even though its stamp is older than the ref.
	cfg3, d3 := stamped(t, c2, "gpus = 2", "gpus = 3")
	live = driftLive(t, d1)
	_ = unstructured.SetNestedField(quota(live, "b").Object, "4", "spec", "hard", "requests.nvidia.com/gpu")
	r = checkDrift(t, cfg3, d3, live, c2, engine.AppliedConfig{Commit: c2, Desired: d3}, engine.AppliedConfig{Commit: c1, Desired: d1})
	wantItems(t, r, "live-edit ResourceQuota b/gpuform", "unapplied ResourceQuota a/gpuform")
}

func TestDriftMissing(t *testing.T) {
	rb := engine.Key{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "a", Name: "gpuform-admins"}
	cfg, d := stamped(t, c1)
	live := driftLive(t, d)
	delete(live.Objects, rb)
	r := checkDrift(t, cfg, d, live, c1)
	wantItems(t, r, "missing RoleBinding a/gpuform-admins")
	if it := r.Items[0]; it.Action != engine.ActionCreate || it.AppliedCommit != c1 {
		t.Errorf("item = %+v", it)
	}
	// Against a newer ref: missing when the configuration at the siblings'
	// stamp has it; the objects of a new tenant are unapplied.
	_, d1 := stamped(t, c1)
	cfg2, d2 := stamped(t, c2, `tenant "s" {`, "tenant \"c\" {\n  protect = false\n}\ntenant \"s\" {")
	r = checkDrift(t, cfg2, d2, live, c2, engine.AppliedConfig{Commit: c2, Desired: d2}, engine.AppliedConfig{Commit: c1, Desired: d1})
	wantItems(t, r, "unapplied Namespace c", "missing RoleBinding a/gpuform-admins")
	// Without the configuration at c1 the deleted binding cannot be told
	// from a new one.
	r = checkDrift(t, cfg2, d2, live, c2)
	wantItems(t, r, "unapplied RoleBinding a/gpuform-admins", "unapplied Namespace c")
	// A tenant removed at c1 and added again at c2 is unapplied, not missing.
	_, d0 := stamped(t, c1, `tenant "s" {`, "tenant \"c\" {\n  protect = false\n}\ntenant \"s\" {")
	_, d1b := stamped(t, c2)
	_, d3 := stamped(t, "3333333333333333333333333333333333333333", `tenant "s" {`, "tenant \"c\" {\n  protect = false\n}\ntenant \"s\" {")
	live = driftLive(t, d1b)
	r = checkDrift(t, cfg2, d3, live, "3333333333333333333333333333333333333333",
		engine.AppliedConfig{Commit: c2, Desired: d1b}, engine.AppliedConfig{Commit: c1, Desired: d0})
	wantItems(t, r, "unapplied Namespace c")
}

func TestDriftDeletes(t *testing.T) {
	_, d1 := stamped(t, c1)
	live := driftLive(t, d1)
	// An object with the stack's labels and c1's stamp that c1 does not have.
	extra := quota(live, "a").DeepCopy()
	extra.SetNamespace("rogue")
	live.Objects[engine.KeyOf(extra)] = extra
	cfg2, d2 := stamped(t, c2, "tenant \"b\" {\n  quota \"h100\" {\n    gpus = 1\n  }\n  admins  = [\"group:b\"]\n  protect = false\n}", "")
	r := checkDrift(t, cfg2, d2, live, c2, engine.AppliedConfig{Commit: c2, Desired: d2}, engine.AppliedConfig{Commit: c1, Desired: d1})
	wantItems(t, r,
		"live-edit ResourceQuota rogue/gpuform",
		"unapplied Namespace b",
		"unapplied ResourceQuota b/gpuform",
		"unapplied RoleBinding b/gpuform-admins")
	if it := item(t, r, engine.DriftUnapplied, "Namespace b"); it.Action != engine.ActionDelete || it.AppliedCommit != c1 {
		t.Errorf("item = %+v", it)
	}
	// Against c1 itself the extra object is a live edit too.
	cfg1, _ := driftConfig(t)
	r = checkDrift(t, cfg1, d1, live, c1)
	wantItems(t, r, "live-edit ResourceQuota rogue/gpuform")
}

func TestDriftNodes(t *testing.T) {
	cfg, d := stamped(t, c1)
	live := driftLive(t, d)
	// Someone took the H100 node out of the pool, and reset the A100's MIG.
	h := live.Nodes[1]
	labels := h.GetLabels()
	delete(labels, engine.LabelPool)
	h.SetLabels(labels)
	a := live.Nodes[0]
	labels = a.GetLabels()
	labels[engine.LabelMIGConfig] = "all-disabled"
	a.SetLabels(labels)
	r := checkDrift(t, cfg, d, live, c1)
	wantItems(t, r, "live-edit Node h100-0", "hardware Node a100-0")
	if it := item(t, r, engine.DriftLiveEdit, "Node h100-0"); paths(it) != `metadata.labels["gpuform.dev/pool"]` || it.Action != engine.ActionUpdate {
		t.Errorf("item = %+v", it)
	}
	if it := item(t, r, engine.DriftHardware, "Node a100-0"); !strings.Contains(it.Details[0], `"all-disabled", not the pool's layout`) || it.Action != engine.ActionUpdate {
		t.Errorf("item = %+v", it)
	}
	// A changed layout in a newer commit is unapplied, not hardware.
	_, d1 := stamped(t, c1)
	cfg2, d2 := stamped(t, c2, `"1g.10gb" = 7`, `"1g.10gb" = 3, "3g.40gb" = 1`)
	live = driftLive(t, d1)
	r = checkDrift(t, cfg2, d2, live, c2, engine.AppliedConfig{Commit: c2, Desired: d2}, engine.AppliedConfig{Commit: c1, Desired: d1})
	wantItems(t, r, "unapplied ConfigMap gpu-operator/gpuform-mig-parted", "unapplied Node a100-0")
}

func TestDriftHardware(t *testing.T) {
	cfg, d := stamped(t, c1)
	live := driftLive(t, d)
	failed := poolNode(t, d, "a100", "a100-failed", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15")
	l := failed.GetLabels()
	l[engine.LabelMIGState] = "failed"
	failed.SetLabels(l)
	wrongModel := poolNode(t, d, "a100", "a100-h100", "NVIDIA-H100-80GB-HBM3", 8, "550.54.15")
	oldDriver := poolNode(t, d, "a100", "a100-old", "NVIDIA-A100-SXM4-80GB", 8, "530.30.02")
	fewer := poolNode(t, d, "a100", "a100-seven", "NVIDIA-A100-SXM4-80GB", 7, "550.54.15")
	instances := poolNode(t, d, "a100", "a100-mig", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15")
	l = instances.GetLabels()
	l["nvidia.com/mig-1g.10gb.count"] = "50"
	instances.SetLabels(l)
	complete := poolNode(t, d, "a100", "a100-mig-ok", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15")
	l = complete.GetLabels()
	l["nvidia.com/mig-1g.10gb.count"] = "56"
	complete.SetLabels(l)
	live.Nodes = append(live.Nodes, failed, wrongModel, oldDriver, fewer, instances, complete)
	r := checkDrift(t, cfg, d, live, c1)
	wantItems(t, r,
		"hardware Node a100-failed",
		"hardware Node a100-h100",
		"hardware Node a100-mig",
		"hardware Node a100-old",
		"hardware Node a100-seven")
	for key, want := range map[string]string{
		"Node a100-failed": `MIG state is "failed"`,
		"Node a100-h100":   "has H100-80GB GPUs; pool a100 wants A100-80GB",
		"Node a100-mig":    "MIG instances 1g.10gb x50 where layout sevens on 8 GPUs asks for 1g.10gb x56",
		"Node a100-old":    "runs driver 530.30.02; pool a100 needs >= 535",
		"Node a100-seven":  "has 7 GPUs where the pool's other nodes have 8",
	} {
		if it := item(t, r, engine.DriftHardware, key); !strings.Contains(strings.Join(it.Details, " "), want) {
			t.Errorf("%s: details %q lack %q", key, it.Details, want)
		}
	}
	if it := item(t, r, engine.DriftHardware, "Node a100-failed"); it.Action != engine.ActionUpdate || paths(it) != `metadata.labels["nvidia.com/mig.config.state"]` {
		t.Errorf("failed node: %+v", it)
	}
	if it := item(t, r, engine.DriftHardware, "Node a100-h100"); it.Action != "" || r.Fixable() != true {
		t.Errorf("hardware apply cannot fix has action %q", it.Action)
	}
	// Only hardware: nothing for apply to do.
	live.Nodes = []*unstructured.Unstructured{live.Nodes[0], live.Nodes[1], wrongModel}
	r = checkDrift(t, cfg, d, live, c1)
	if wantItems(t, r, "hardware Node a100-h100"); r.Fixable() || r.Plan.Change != 0 {
		t.Errorf("fixable %v, plan %+v", r.Fixable(), r.Plan)
	}
}

func TestDriftSensitiveValuesHidden(t *testing.T) {
	cfg, d := stamped(t, c1)
	live := driftLive(t, d)
	_ = unstructured.SetNestedField(quota(live, "s").Object, "7", "spec", "hard", "requests.cpu")
	r := checkDrift(t, cfg, d, live, c1)
	wantItems(t, r, "live-edit ResourceQuota s/gpuform")
	for _, render := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return engine.RenderDriftJSON(b, r, nil) },
		func(b *bytes.Buffer) error { return engine.RenderDriftText(b, r, engine.TextOptions{}) },
		func(b *bytes.Buffer) error { return engine.RenderDriftMarkdown(b, r, nil) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), `"7"`) || strings.Contains(b.String(), `"8"`) || !strings.Contains(b.String(), engine.SensitiveValue) {
			t.Errorf("sensitive value shown:\n%s", b.String())
		}
	}
}

// The outputs of one report with every class, as golden files.
func TestDriftRenderGolden(t *testing.T) {
	_, d1 := stamped(t, c1)
	cfg2, d2 := stamped(t, c2, "gpus = 2", "gpus = 3")
	live := driftLive(t, d1)
	_ = unstructured.SetNestedField(quota(live, "b").Object, "4", "spec", "hard", "requests.nvidia.com/gpu")
	delete(live.Objects, engine.Key{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "b", Name: "gpuform-admins"})
	live.Nodes = append(live.Nodes, poolNode(t, d1, "a100", "a100-old", "NVIDIA-A100-SXM4-80GB", 8, "530.30.02"))
	r := checkDrift(t, cfg2, d2, live, c2, engine.AppliedConfig{Commit: c2, Desired: d2}, engine.AppliedConfig{Commit: c1, Desired: d1})
	r.CheckedAt = time.Date(2025, 3, 1, 4, 0, 0, 0, time.UTC)
	r.ConfigSource = &engine.ConfigSource{Ref: "main", Commit: c2}
	wantItems(t, r,
		"live-edit ResourceQuota b/gpuform",
		"unapplied ResourceQuota a/gpuform",
		"missing RoleBinding b/gpuform-admins",
		"hardware Node a100-old")
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"drift.txt", func(b *bytes.Buffer) error { return engine.RenderDriftText(b, r, engine.TextOptions{}) }},
		{"drift.json", func(b *bytes.Buffer) error { return engine.RenderDriftJSON(b, r, nil) }},
		{"drift.md", func(b *bytes.Buffer) error { return engine.RenderDriftMarkdown(b, r, nil) }},
		{"drift.prom", func(b *bytes.Buffer) error { return engine.WriteDriftMetrics(b, r) }},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			t.Fatal(err)
		}
		golden(t, "drift/"+f.name, buf.String())
	}
	var j map[string]any
	var buf bytes.Buffer
	_ = engine.RenderDriftJSON(&buf, r, nil)
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j["in_sync"] != false || j["counts"].(map[string]any)["missing"] != 1.0 {
		t.Errorf("json: in_sync %v, counts %v", j["in_sync"], j["counts"])
	}
}

func TestDriftMetricsInSync(t *testing.T) {
	r := &engine.DriftReport{Stack: `we"ird\stack`, CheckedAt: time.Unix(1700000000, 500000000)}
	var b bytes.Buffer
	if err := engine.WriteDriftMetrics(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`gpuform_drift_objects{stack="we\"ird\\stack",class="live-edit"} 0`,
		`gpuform_drift_objects{stack="we\"ird\\stack",class="hardware"} 0`,
		`gpuform_drift_in_sync{stack="we\"ird\\stack"} 1`,
		`gpuform_drift_last_check_timestamp_seconds{stack="we\"ird\\stack"} 1700000000.5`,
		"# TYPE gpuform_drift_objects gauge",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, b.String())
		}
	}
}
