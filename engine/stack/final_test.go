package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
)

// recording is a Cluster that keeps every Desired a refresh is given,
// with each of its objects as JSON at that moment.
type recording struct {
	stack.Cluster
	seen  []*engine.Desired
	stamp [][][]byte
}

func (r *recording) Refresh(ctx context.Context, d *engine.Desired, opts engine.RefreshOptions) (*engine.Live, error) {
	js := make([][]byte, len(d.Objects))
	for i, o := range d.Objects {
		b, err := json.Marshal(o.Object.Object)
		if err != nil {
			return nil, err
		}
		js[i] = b
	}
	r.seen, r.stamp = append(r.seen, d), append(r.stamp, js)
	return r.Cluster.Refresh(ctx, d, opts)
}

// changed names the objects of every Desired seen whose content is not
// what it was when it was refreshed.
func (r *recording) changed(t *testing.T) []string {
	t.Helper()
	var out []string
	for i, d := range r.seen {
		for j, o := range d.Objects {
			b, err := json.Marshal(o.Object.Object)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, r.stamp[i][j]) {
				out = append(out, o.Key().String()+": "+string(r.stamp[i][j])+" -> "+string(b))
			}
		}
	}
	return out
}

// sharedMaps counts the maps that two objects of d hold as one (compile
// shares equal small maps: engine.Object).
func sharedMaps(d *engine.Desired) int {
	owner := map[uintptr]int{}
	shared := map[uintptr]bool{}
	var walk func(v any, obj int)
	walk = func(v any, obj int) {
		switch v := v.(type) {
		case map[string]any:
			p := reflect.ValueOf(v).Pointer()
			if o, ok := owner[p]; ok && o != obj {
				shared[p] = true
			}
			owner[p] = obj
			for _, e := range v {
				walk(e, obj)
			}
		case []any:
			for _, e := range v {
				walk(e, obj)
			}
		}
	}
	for i, o := range d.Objects {
		walk(o.Object.Object, i)
	}
	return len(shared)
}

// A compiled Desired is final: no stage after compile (refresh, diff,
// apply, the plan after it, drift and its fix) writes into its objects,
// whose equal small maps are one copy among them, so a write into one
// would change others.
func TestDesiredStaysAsCompiled(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	src := quickstartGit(t)
	src.head = commitA
	rec := &recording{Cluster: cl}
	st := stack.New(src, stack.Using(rec), stack.Options{})
	if _, err := st.Plan(ctx, stack.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := sharedMaps(rec.seen[0]); n == 0 {
		t.Fatal("the quickstart's desired objects share no map: the test proves nothing")
	}
	if res, err := st.Apply(ctx, applyOpts()); err != nil || !res.OK() {
		t.Fatalf("apply: %v, %+v", err, res)
	}
	if _, err := st.Plan(ctx, stack.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	src.head = commitB
	rec.Cluster = openSim(t, dir)
	st = stack.New(src, stack.Using(rec), stack.Options{})
	if _, err := st.Drift(ctx); err != nil {
		t.Fatal(err)
	}
	if fix, err := st.Fix(ctx, applyOpts()); err != nil || fix.Apply == nil || !fix.Apply.OK() {
		t.Fatalf("fix: %v, %+v", err, fix)
	}
	if len(rec.seen) < 5 {
		t.Fatalf("%d refreshes seen, want one per stage", len(rec.seen))
	}
	for _, c := range rec.changed(t) {
		t.Errorf("a desired object changed after its refresh: %s", c)
	}
}
