package v1_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
)

// oldAnnotation is how engine's compile wrote the layout annotation before
// this package existed: a map marshalled to YAML and converted to JSON. The
// annotation's bytes must not change (drift compares them with the nodes').
func oldAnnotation(t *testing.T, name, gpu string, entries []any) string {
	t.Helper()
	b, err := yaml.Marshal(map[string]any{"name": name, "gpu": gpu, "config": entries})
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func TestMIGLayoutAnnotationBytes(t *testing.T) {
	slices := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = int64(kv[i+1].(int))
		}
		return m
	}
	tests := []struct {
		name, layoutName, gpu string
		layout                agentv1.Layout
		old                   []any
	}{
		{name: "all GPUs", layoutName: "balanced", gpu: "A100-80GB",
			layout: agentv1.Layout{{All: true, Enabled: true, Slices: map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}}},
			old:    []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": slices("1g.10gb", 2, "2g.20gb", 1, "3g.40gb", 1)}}},
		{name: "all GPUs without slices", layoutName: "on", gpu: "H100-80GB",
			layout: agentv1.Layout{{All: true, Enabled: true}},
			old:    []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": map[string]any{}}}},
		{name: "per device", layoutName: "mixed", gpu: "H100-80GB",
			layout: agentv1.Layout{
				{Indexes: []int{0, 1, 2, 3}, Enabled: true, Slices: map[string]int{"1g.10gb+me": 1, "1g.10gb": 6}},
				{Indexes: []int{4, 5}, Enabled: true},
				{Indexes: []int{6, 7}},
			},
			old: []any{
				map[string]any{"devices": []any{int64(0), int64(1), int64(2), int64(3)}, "mig-enabled": true, "mig-devices": slices("1g.10gb+me", 1, "1g.10gb", 6)},
				map[string]any{"devices": []any{int64(4), int64(5)}, "mig-enabled": true, "mig-devices": map[string]any{}},
				map[string]any{"devices": []any{int64(6), int64(7)}, "mig-enabled": false},
			}},
		{name: "names YAML or HTML would mangle", layoutName: "yes", gpu: `a<b>&"c" é 123`,
			layout: agentv1.Layout{{All: true, Enabled: true, Slices: map[string]int{"null": 1}}},
			old:    []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": slices("null", 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := agentv1.MIGLayout{Name: tt.layoutName, GPU: tt.gpu, Config: tt.layout}
			got, err := l.Annotation()
			if err != nil {
				t.Fatal(err)
			}
			if want := oldAnnotation(t, tt.layoutName, tt.gpu, tt.old); got != want {
				t.Errorf("annotation\n got %s\nwant %s", got, want)
			}
			back, err := agentv1.ParseMIGLayout(got)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := back.Annotation(); again != got {
				t.Errorf("round trip: %s, want %s", again, got)
			}
		})
	}
}

func TestParseMIGLayout(t *testing.T) {
	l, err := agentv1.ParseMIGLayout(`{"config":[{"devices":[1],"mig-devices":{"3g.40gb":2},"mig-enabled":true}],"gpu":"A100-80GB","name":"halves","extra":1}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &agentv1.MIGLayout{Name: "halves", GPU: "A100-80GB", Config: agentv1.Layout{{Indexes: []int{1}, Enabled: true, Slices: map[string]int{"3g.40gb": 2}}}}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("got %+v", l)
	}
	for _, tt := range []struct{ in, err string }{
		{`{`, "unexpected end of JSON"},
		{`{"name":"x"}`, "no config entries"},
		{`{"name":"x","config":[]}`, "no config entries"},
		{`{"name":"x","config":[{"devices":"all","device-filter":"0x20B010DE","mig-enabled":true}]}`, `has a "device-filter"`},
		{`{"name":"x","config":[{"mig-enabled":true}]}`, `has no "devices"`},
		{`{"name":"x","config":[{"devices":"some"}]}`, `"devices" is "some"`},
		{`{"name":"x","config":[{"devices":"all","mig-enable":true}]}`, `unknown field "mig-enable"`},
	} {
		if _, err := agentv1.ParseMIGLayout(tt.in); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.in, err, tt.err)
		}
	}
}

// An entry with MIG on writes its mig-devices even when empty, as
// mig-parted's all-enabled config does; one with MIG off leaves them out.
func TestLayoutEntryMIGDevices(t *testing.T) {
	for _, tt := range []struct {
		entry agentv1.LayoutEntry
		want  string
	}{
		{agentv1.LayoutEntry{All: true, Enabled: true}, `{"devices":"all","mig-enabled":true,"mig-devices":{}}`},
		{agentv1.LayoutEntry{Indexes: []int{2}}, `{"devices":[2],"mig-enabled":false}`},
		{agentv1.LayoutEntry{}, `{"devices":[],"mig-enabled":false}`},
		{agentv1.LayoutEntry{All: true, Slices: map[string]int{"1g.10gb": 1}}, `{"devices":"all","mig-enabled":false,"mig-devices":{"1g.10gb":1}}`},
	} {
		b, err := json.Marshal(tt.entry)
		if err != nil || string(b) != tt.want {
			t.Errorf("%+v: %s (%v), want %s", tt.entry, b, err, tt.want)
		}
	}
}
