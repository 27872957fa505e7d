package compile

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestBackendTable checks that every scheduler and MIG backend the gpuform
// block accepts has a backend, and that Compile refuses one it does not know.
func TestBackendTable(t *testing.T) {
	tests := []struct {
		scheduler, migBackend string
		wantSched, wantMIG    string // types, as %T prints them
		wantErr               string
	}{
		{config.SchedulerNone, config.BackendGPUOperator, "compile.noScheduler", "*compile.gpuOperator", ""},
		{config.SchedulerKueue, config.BackendAgent, "*compile.kueue", "compile.agent", ""},
		{config.SchedulerVolcano, config.BackendGPUOperator, "*compile.volcano", "*compile.gpuOperator", ""},
		{"slurm", config.BackendGPUOperator, "", "", `compile: unknown scheduler "slurm"`},
		{config.SchedulerNone, "mig-parted", "", "", `compile: unknown MIG backend "mig-parted"`},
	}
	for _, tt := range tests {
		t.Run(tt.scheduler+"/"+tt.migBackend, func(t *testing.T) {
			s := &config.Settings{Stack: "s", Scheduler: tt.scheduler, MIGBackend: tt.migBackend, GPUOperatorNamespace: "gpu-operator"}
			_, err := Compile(&config.Config{Settings: s})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Compile: error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sched, _ := newScheduler(s)
			migb, _ := newMIGBackend(s)
			if got := fmt.Sprintf("%T", sched); got != tt.wantSched {
				t.Errorf("scheduler %q is a %s, want %s", tt.scheduler, got, tt.wantSched)
			}
			if got := fmt.Sprintf("%T", migb); got != tt.wantMIG {
				t.Errorf("MIG backend %q is a %s, want %s", tt.migBackend, got, tt.wantMIG)
			}
		})
	}
	if len(schedulers()) != 3 || len(migBackends()) != 2 {
		t.Errorf("%d schedulers and %d MIG backends in the table; this test covers 3 and 2", len(schedulers()), len(migBackends()))
	}
}

// fakeScheduler is a scheduler backend written in a test alone: it proves
// that a new scheduler needs no change outside its own file (and its row in
// the table), since everything it adds shows up in what Compile and
// Validate return.
type fakeScheduler struct{ stack string }

func (f fakeScheduler) object(kind, name, address string) *engine.Object {
	return &engine.Object{Object: newObject(engine.Kind{GroupVersionKind: schema.GroupVersionKind{Group: "fake.example", Version: "v1", Kind: kind}}, "", name, f.stack, address)}
}

func (fakeScheduler) Applied(iter.Seq[*unstructured.Unstructured]) (capacity.Counts, bool) {
	return nil, false
}

func (f fakeScheduler) Priority(p *config.Priority) []*engine.Object {
	return []*engine.Object{f.object("FakePriority", p.Name, p.Address)}
}

func (f fakeScheduler) Pool(p *config.Pool) []*engine.Object {
	return []*engine.Object{f.object("FakeFlavor", p.Name, p.Address)}
}

func (f fakeScheduler) Tenant(t *config.Tenant, quota *capacity.TenantQuota) []*engine.Object {
	q := f.object("FakeQueue", t.Namespace, t.Address)
	total := int64(0)
	for _, n := range quota.Total() {
		total += n
	}
	q.Object.Object["spec"] = map[string]any{"total": strconv.FormatInt(total, 10)}
	return []*engine.Object{q}
}

func (fakeScheduler) ResourceQuota(*capacity.Quotas, *config.Tenant) capacity.Counts {
	return capacity.Counts{"count/fakequeues.fake.example": 1}
}

func (f fakeScheduler) Objects(cfg *config.Config) []*engine.Object {
	return []*engine.Object{f.object("FakeCohort", f.stack, engine.StackAddress)}
}

func (fakeScheduler) Model(w *Workload) {
	w.Labels["fake.example/queue"] = w.Namespace
	w.Annotations["fake.example/model"] = w.Model.Name
	w.Predictor["schedulerName"] = "fake"
	w.DependsOn = append(w.DependsOn, engine.Key{Group: "fake.example", Kind: "FakeQueue", Name: w.Namespace})
}

// Arguments: the fake scheduler reads the cohorts and limits of examples/bank.
func (fakeScheduler) Arguments() []string {
	return []string{"tenant.cohort", "tenant.quota.borrowing_limit", "tenant.quota.lending_limit"}
}

func (fakeScheduler) Validate(cfg *config.Config, _ *capacity.Quotas) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range cfg.Tenants {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Fake refuses", Detail: t.Name, Subject: t.DeclRange.Ptr()})
	}
	return diags
}

// fakeMIG is a MIG backend written in a test alone.
type fakeMIG struct{ layouts []string }

func (f *fakeMIG) Pool(p *config.Pool, np *engine.NodePool) error {
	np.Annotations = map[string]string{"fake.example/layout": p.MIGLayout.Name}
	np.MIGState = "fake.example/state"
	f.layouts = append(f.layouts, p.MIGLayout.Name)
	return nil
}

func (f *fakeMIG) Objects() ([]*engine.Object, error) {
	cm := newObject(engine.KindConfigMap, "fake", "fake-mig", "bank-prod", engine.StackAddress)
	cm.Object["data"] = map[string]any{"layouts": fmt.Sprint(f.layouts)}
	return []*engine.Object{{Object: cm}}, nil
}

func (f *fakeMIG) Model(w *Workload) {
	if w.Model.Slice != "" {
		w.DependsOn = append(w.DependsOn, engine.Key{Kind: "ConfigMap", Namespace: "fake", Name: "fake-mig"})
	}
}

// TestFakeBackends compiles and validates examples/bank with backends
// written in this test, and finds everything they add.
func TestFakeBackends(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "bank", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": src}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	fs := fakeScheduler{stack: cfg.Settings.Stack}
	d, err := compileWith(cfg, fs, &fakeMIG{})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]*engine.Object{}
	for _, o := range d.Objects {
		byKind[o.Object.GetKind()] = append(byKind[o.Object.GetKind()], o)
	}
	for _, k := range []struct {
		kind string
		n    int
	}{{"FakePriority", len(cfg.Priorities)}, {"FakeFlavor", len(cfg.Pools)}, {"FakeQueue", len(cfg.Tenants)}, {"FakeCohort", 1}, {"ClusterQueue", 0}, {"ResourceFlavor", 0}} {
		if got := len(byKind[k.kind]); got != k.n {
			t.Errorf("%d %s objects, want %d", got, k.kind, k.n)
		}
	}
	for i, o := range byKind["FakeQueue"] {
		if o.Address != cfg.Tenants[i].Address {
			t.Errorf("FakeQueue %s has address %q, want %q", o.Object.GetName(), o.Address, cfg.Tenants[i].Address)
		}
	}
	if q := byKind["FakeQueue"][0].Object.Object["spec"].(map[string]any)["total"]; q != "4" { // risk: 3g.40gb x 2 + 1g.10gb x 2
		t.Errorf("tenant risk's FakeQueue totals %v, want 4", q)
	}
	for _, rq := range byKind["ResourceQuota"] {
		if h, _, _ := unstructured.NestedString(rq.Object.Object, "spec", "hard", "count/fakequeues.fake.example"); h != "1" {
			t.Errorf("ResourceQuota %s/%s: the fake scheduler's limit is %q, want 1", rq.Object.GetNamespace(), rq.Object.GetName(), h)
		}
	}
	if c := byKind["FakeCohort"]; len(c) != 1 || c[0].Address != engine.StackAddress {
		t.Errorf("the fake scheduler's stack-wide object: %v, want one at address %q", c, engine.StackAddress)
	}
	cm := d.Lookup(engine.Key{Kind: "ConfigMap", Namespace: "fake", Name: "fake-mig"})
	if cm == nil || cm.Address != engine.StackAddress || cm.Object.Object["data"].(map[string]any)["layouts"] != "[balanced]" {
		t.Errorf("fake MIG ConfigMap: %+v", cm)
	}
	if np := d.Pools[0]; np.Annotations["fake.example/layout"] != "balanced" || np.MIGState != "fake.example/state" || np.Labels[engine.LabelMIGConfig] != "" {
		t.Errorf("MIG pool %s: labels %v, annotations %v, state %q", np.Pool, np.Labels, np.Annotations, np.MIGState)
	}
	sliced := map[string]string{}
	for _, m := range cfg.Models {
		sliced[m.Address] = m.Slice
	}
	if len(byKind["InferenceService"]) != len(cfg.Models) {
		t.Errorf("%d InferenceServices for %d models", len(byKind["InferenceService"]), len(cfg.Models))
	}
	for _, o := range byKind["InferenceService"] {
		spec := o.Object.Object["spec"].(map[string]any)["predictor"].(map[string]any)
		if o.Object.GetLabels()["fake.example/queue"] != o.Object.GetNamespace() || o.Object.GetAnnotations()["fake.example/model"] != o.Object.GetName() || spec["schedulerName"] != "fake" {
			t.Errorf("%s: labels %v, annotations %v, schedulerName %v", o.Address, o.Object.GetLabels(), o.Object.GetAnnotations(), spec["schedulerName"])
		}
		waitsForMIG := false
		for _, k := range o.DependsOn {
			waitsForMIG = waitsForMIG || k.Name == "fake-mig"
		}
		if waitsForMIG != (sliced[o.Address] != "") {
			t.Errorf("%s waits for the fake MIG ConfigMap: %t; asks for MIG slice %q", o.Address, waitsForMIG, sliced[o.Address])
		}
	}
	vd := validateWith(cfg, mig.Default(), fs)
	if len(vd) != len(cfg.Tenants) || vd[0].Summary != "Fake refuses" || vd[0].Subject == nil || vd[0].Subject.Start.Line == 0 {
		t.Errorf("Validate with the fake scheduler: %v, want one \"Fake refuses\" per tenant, at the tenant", vd)
	}
}

// TestSchedulerArgumentsExist checks that every argument a scheduler of
// the table declares is an argument of the language, in a block the check
// of foreign arguments can find.
func TestSchedulerArgumentsExist(t *testing.T) {
	users := schedulerArguments(&config.Settings{Stack: "s"})
	if len(users) == 0 {
		t.Fatal("no scheduler declares an argument")
	}
	for path, names := range users {
		block, attr := splitArgument(path)
		if _, ok := (&config.Config{}).Blocks(block); !ok {
			t.Errorf("%s (of %v): config.Blocks does not know block %q", path, names, block)
		}
		if !schemaHas(config.Schema(), strings.Split(block, "."), attr) {
			t.Errorf("%s (of %v): no argument %q in block %q of config.Schema", path, names, attr, block)
		}
	}
}

func schemaHas(blocks []config.BlockSchema, path []string, attr string) bool {
	for _, b := range blocks {
		if b.Type != path[0] {
			continue
		}
		if len(path) > 1 {
			return schemaHas(b.Blocks, path[1:], attr)
		}
		for _, a := range b.Attrs {
			if a.Name == attr {
				return true
			}
		}
	}
	return false
}

// TestNewSchedulerArguments shows a scheduler written in a test getting
// the check for free: an argument it declares is refused under kueue, with
// its name, and kueue's cohort is refused under it.
func TestNewSchedulerArguments(t *testing.T) {
	src := `gpuform {
  stack     = "s"
  scheduler = "kueue"
}
tenant "a" {
  cpu    = "4"
  cohort = "c"
}
`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	users := schedulerArguments(cfg.Settings)
	users["tenant.cpu"] = []string{"fake"}
	got := foreignArguments(cfg, "kueue", newKueueForTest(cfg.Settings), users)
	if len(got) != 1 || !strings.Contains(got[0].Detail, `cpu is read only by scheduler "fake"`) || got[0].Subject.Start.Line != 6 {
		t.Errorf("under kueue: %v, want cpu refused at line 6 for scheduler \"fake\"", got)
	}
	got = foreignArguments(cfg, "fake", cpuScheduler{}, users)
	if len(got) != 1 || !strings.Contains(got[0].Detail, `cohort is read only by scheduler "kueue", and this stack's scheduler is "fake"`) || got[0].Subject.Start.Line != 7 {
		t.Errorf("under the fake scheduler: %v, want cohort refused at line 7 for scheduler \"kueue\"", got)
	}
}

func newKueueForTest(s *config.Settings) Scheduler { return schedulers()[config.SchedulerKueue](s) }

// cpuScheduler is a scheduler written in a test that reads a tenant's cpu.
type cpuScheduler struct{ noScheduler }

func (cpuScheduler) Arguments() []string { return []string{"tenant.cpu"} }

// writingMIG is a MIG backend that writes into each model's node
// selector and resources, as a backend may.
type writingMIG struct{ fakeMIG }

func (f *writingMIG) Model(w *Workload) {
	w.Predictor["nodeSelector"].(map[string]any)["fake.example/model"] = w.Model.Name
	limits := w.Predictor["model"].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)
	limits["fake.example/model"] = w.Model.Name
}

// TestBackendsWriteOwnMaps checks that the maps a backend is given for a
// model are that model's own: writing into one changes no other model.
func TestBackendsWriteOwnMaps(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "bank", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": src}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compileWith(cfg, fakeScheduler{stack: cfg.Settings.Stack}, &writingMIG{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range d.Objects {
		if o.Object.GetKind() != "InferenceService" {
			continue
		}
		n++
		name := o.Object.GetName()
		sel, _, _ := unstructured.NestedString(o.Object.Object, "spec", "predictor", "nodeSelector", "fake.example/model")
		lim, _, _ := unstructured.NestedString(o.Object.Object, "spec", "predictor", "model", "resources", "limits", "fake.example/model")
		if sel != name || lim != name {
			t.Errorf("InferenceService %s: node selector names model %q, limits %q: another model's write", name, sel, lim)
		}
	}
	if n < 2 {
		t.Fatalf("%d models: too few to prove anything", n)
	}
}
