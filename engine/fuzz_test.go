package engine_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// fuzzClusterPolicy is a GPU Operator ClusterPolicy; Diff needs one for MIG
// pools. With config it already points at gpuform's mig-parted ConfigMap,
// with MIG strategy mixed.
func fuzzClusterPolicy(config string) *unstructured.Unstructured {
	spec := map[string]any{}
	if config != "" {
		spec["migManager"] = map[string]any{"config": map[string]any{"name": config}}
		spec["mig"] = map[string]any{"strategy": engine.MIGStrategyMixed}
	}
	cp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
		"metadata": map[string]any{"name": "cluster-policy", "resourceVersion": "7"},
		"spec":     spec,
	}}
	return cp
}

// savedQuickstartPlans are real saved plans of examples/quickstart: against
// an empty cluster (creates, and an update of the ClusterPolicy), and against
// one where it was applied and then edited (updates with field diffs).
func savedQuickstartPlans(f *testing.F) [][]byte {
	f.Helper()
	d := enginetest.Quickstart(f)
	empty := &engine.Live{Source: "x", ClusterPolicies: []*unstructured.Unstructured{fuzzClusterPolicy("")}}
	edited := &engine.Live{Source: "x", ClusterPolicies: []*unstructured.Unstructured{fuzzClusterPolicy(engine.MIGPartedConfig)}, Objects: map[engine.Key]*unstructured.Unstructured{}}
	for i, o := range d.Objects {
		u := o.Object.DeepCopy()
		u.SetResourceVersion("42")
		if i%2 == 0 {
			labels := u.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["edited"] = "by-hand"
			u.SetLabels(labels)
			u.Object["spec"] = map[string]any{"edited": []any{1.5, "x", true, nil, map[string]any{"k": "v"}}}
		}
		edited.Objects[o.Key()] = u
	}
	var out [][]byte
	for _, live := range []*engine.Live{empty, edited} {
		p, err := engine.Diff(d, live, engine.DiffOptions{})
		if err != nil {
			f.Fatal(err)
		}
		pf, err := engine.NewPlanFile(p, "fuzz", "0123abcd", "ctx", false)
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := pf.Write(&buf); err != nil {
			f.Fatal(err)
		}
		back, err := engine.ReadPlanFile(bytes.NewReader(buf.Bytes()))
		if err != nil || len(back.Changes) == 0 || len(back.Changes) != len(p.Changes) {
			f.Fatalf("a saved plan of %d changes reads back as %v, %v", len(p.Changes), back, err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}

// planFileSnippets are hand-written, mostly malformed saved plans.
var planFileSnippets = []string{
	``,
	`null`,
	`{}`,
	`[]`,
	`{"format_version":"2"}`,
	`{"format_version":"2","checksum":""}`,
	`{"format_version":"3","changes":[]}`,
	`{"format_version":1}`,
	`{"format_version":"2","changes":[{"address":"a","key":{"kind":"Namespace","name":"n"},"action":"create","after":{"metadata":"not a map"}}]}`,
	`{"format_version":"2","changes":[{"action":"update","before":{"metadata":{"name":7}},"fields":[{"path":"","op":"?","before":[],"after":{}}]},null]}`,
	`{"format_version":"2","changes":[{"action":"delete","before":{"apiVersion":["x"],"kind":{}}},{"action":"conflict","reason":"\u0000\ufffd"},{"action":"bogus"}]}`,
	`{"format_version":"2","summary":{"add":-1,"change":9223372036854775807},"read_versions":{"":""},"disruption":{"n":null},"throttles":{"x":-5}}`,
	`{"format_version":"2","created":"0000-01-01T00:00:00+01:00","config_source":{"commit":"","dirty":true}}`,
	`{"format_version":"2","created":"not a time"}`,
	"{\"format_version\":\"2\",\"stack\":\"\xff\xfe\",\"source\":\"\x1b[31m\"}",
	`{"format_version":"2","changes":[{"action":"update","fields":[{"path":"spec.x","op":"~","before":"` + string(bytes.Repeat([]byte("line\n"), 40)) + `","after":"b"}]}]}`,
}

// checkPlanFile exercises a plan file that ReadPlanFile accepted: rebuild
// the plan, render it every way, save it again and read that back.
func checkPlanFile(t *testing.T, pf *engine.PlanFile) {
	t.Helper()
	p := pf.Plan()
	if len(p.Changes) != len(pf.Changes) {
		t.Fatalf("Plan() has %d changes, the file %d", len(p.Changes), len(pf.Changes))
	}
	for _, color := range []bool{false, true} {
		if err := render.Text(io.Discard, p, render.TextOptions{Color: color}); err != nil {
			t.Fatalf("RenderText: %v", err)
		}
	}
	if err := render.JSON(io.Discard, p); err != nil {
		t.Fatalf("RenderJSON: %v", err)
	}
	if err := render.Markdown(io.Discard, p); err != nil {
		t.Fatalf("RenderMarkdown: %v", err)
	}
	pf.StaleObjects(&engine.Live{ClusterPolicies: []*unstructured.Unstructured{fuzzClusterPolicy("x")}})
	_ = engine.Recheck(pf.Plan(), &engine.Live{ClusterPolicies: []*unstructured.Unstructured{fuzzClusterPolicy("x")}}, nil, true)
	checkSignature(t, pf)

	var first bytes.Buffer
	if err := pf.Write(&first); err != nil {
		t.Fatalf("write an accepted plan file again: %v", err)
	}
	again, err := engine.ReadPlanFile(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatalf("read back a plan file just written: %v\n%s", err, first.Bytes())
	}
	if len(again.Changes) != len(pf.Changes) || again.Summary != pf.Summary {
		t.Fatalf("round trip changed the plan: %d changes %+v, was %d changes %+v", len(again.Changes), again.Summary, len(pf.Changes), pf.Summary)
	}
	p2 := again.Plan()
	if len(p2.Changes) != len(p.Changes) || p2.Summary != p.Summary || p2.Stack != p.Stack || p2.Source != p.Source {
		t.Fatalf("round trip changed the rebuilt plan")
	}
	var second bytes.Buffer
	if err := again.Write(&second); err != nil {
		t.Fatalf("write the plan file read back: %v", err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("saving is not stable:\n%s\nthen\n%s", first.Bytes(), second.Bytes())
	}
}

// checkSignature signs an accepted plan file, reads it back and checks
// that exactly its key authenticates it; the file keeps its signature
// state.
func checkSignature(t *testing.T, pf *engine.PlanFile) {
	t.Helper()
	cp := *pf
	var buf bytes.Buffer
	if err := cp.WriteSigned(&buf, planKey); err != nil {
		t.Fatalf("sign an accepted plan file: %v", err)
	}
	signed, err := engine.ReadPlanFile(&buf)
	if err != nil {
		t.Fatalf("read back a plan file just signed: %v", err)
	}
	if err := signed.Authenticate(planKey); err != nil {
		t.Fatalf("a plan file just signed does not authenticate: %v", err)
	}
	if signed.Authenticate(otherKey) == nil || signed.Authenticate(nil) == nil {
		t.Fatal("a signed plan file authenticates with another key or none")
	}
	// Any ref and creation time (year 0, far future) is judged, never a panic.
	if err := signed.CheckBinding(engine.PlanBinding{Ref: signed.Ref, AllowOtherRef: true}); err != nil && signed.Created.Before(time.Now()) {
		t.Fatalf("a signed plan of any age with no limit and any ref allowed: %v", err)
	}
	_ = signed.CheckBinding(engine.PlanBinding{Ref: "main", MaxAge: engine.DefaultPlanMaxAge})
}

// FuzzReadPlanFile feeds arbitrary bytes to the saved-plan reader. It must
// never panic, and a plan it accepts must rebuild, render, be rechecked
// against a cluster, survive a save and a read, and be signed and
// authenticated by its key only. As random edits break the checksum, the body also takes any
// content that decodes as a PlanFile, re-saves it (which recomputes the
// checksum) and checks that, so the fuzzer reaches Plan() and the renderers.
func FuzzReadPlanFile(f *testing.F) {
	for _, b := range savedQuickstartPlans(f) {
		f.Add(b)
	}
	for _, s := range planFileSnippets {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if pf, err := engine.ReadPlanFile(bytes.NewReader(data)); err == nil {
			checkPlanFile(t, pf)
		} else if pf != nil {
			t.Fatalf("ReadPlanFile returned a plan file with error %v", err)
		}

		var pf engine.PlanFile
		if json.Unmarshal(data, &pf) != nil {
			return
		}
		pf.FormatVersion = engine.PlanFileVersion
		var buf bytes.Buffer
		if err := pf.Write(&buf); err != nil {
			t.Fatalf("write decoded content: %v", err)
		}
		resealed, err := engine.ReadPlanFile(&buf)
		if err != nil {
			// Content gpuform cannot have written may be refused, but
			// never for its checksum: Write and ReadPlanFile must agree.
			if strings.Contains(err.Error(), "checksum") {
				t.Fatalf("read back re-checksummed content: %v", err)
			}
			return
		}
		checkPlanFile(t, resealed)
	})
}

// TestReadPlanFileRefusesChangesWithoutObjects: a plan file with a valid
// checksum but a change gpuform cannot have written (found by
// FuzzReadPlanFile: a create without its object crashed the text renderer
// and would have crashed apply) is refused with an error.
func TestReadPlanFileRefusesChangesWithoutObjects(t *testing.T) {
	for _, sc := range []engine.SavedChange{
		{Action: engine.ActionCreate},
		{Action: engine.ActionUpdate, After: map[string]any{}},
		{Action: engine.ActionAdopt, After: map[string]any{"kind": "Namespace"}},
		{Action: "bogus"},
	} {
		sc.Key = engine.Key{Kind: "Namespace", Name: "n"}
		pf := &engine.PlanFile{FormatVersion: engine.PlanFileVersion, Changes: []engine.SavedChange{sc}}
		var buf bytes.Buffer
		if err := pf.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := engine.ReadPlanFile(&buf); err == nil || !strings.Contains(err.Error(), "Namespace n") {
			t.Errorf("%s change: error %v, want a refusal naming the object", sc.Action, err)
		}
	}
}
