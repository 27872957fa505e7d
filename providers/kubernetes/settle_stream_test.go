package kubernetes

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// streamCorpus is generated size S compiled, and its objects' items as the
// API server lists them, each with its kind.
type streamCorpus struct {
	settler *engine.Settler
	items   [][]byte
	gvks    []schema.GroupVersionKind
}

func newStreamCorpus(tb testing.TB) *streamCorpus {
	tb.Helper()
	dir := tb.TempDir()
	writeSizeS(tb, dir)
	d := CompileDir(tb, dir)
	c := &streamCorpus{settler: engine.NewSettler(d)}
	for gvk, list := range serverLists(tb, d) {
		items, err := ListItems(list)
		if err != nil {
			tb.Fatal(err)
		}
		for _, raw := range items {
			c.items = append(c.items, raw)
			c.gvks = append(c.gvks, gvk)
		}
	}
	return c
}

// checkStream fails unless settling raw as it streams gives what decoding
// it whole and settling gives, or gives way to it; it reports whether the
// stream settled it.
func (c *streamCorpus) checkStream(t *testing.T, raw []byte, gvk schema.GroupVersionKind) bool {
	t.Helper()
	d := newDecoder(true)
	got, ok := d.settleStream(bytes.Clone(raw), gvk, c.settler)
	u, err := newDecoder(true).item(raw, gvk, true)
	if err != nil {
		if ok {
			t.Errorf("%.120q: the stream settled an item that does not decode: %v", raw, err)
		}
		return ok
	}
	want, wantOK := c.settler.Settle(u)
	switch {
	case ok && !wantOK:
		t.Errorf("%.120q: the stream settled an item Settle does not", raw)
	case ok && !reflect.DeepEqual(got, want):
		t.Errorf("%.120q: stream settled to\n%#v\nSettle to\n%#v", raw, got.Object, want.Object)
	}
	return ok
}

// streamEditsJSON are edits of an item's JSON, each one a change Settle
// finds or not.
var streamEditsJSON = []struct{ name, old, new string }{
	{"a string changed", `"pytorch"`, `"onnx"`},
	{"a number changed", `"maxReplicas":1`, `"maxReplicas":2`},
	{"a quantity in another form", `":"1"`, `":"1000m"`},
	{"a server default added", `"spec":{`, `"spec":{"defaulted":{"a":[1,{"b":null}]},`},
	{"a map made null", `"spec":{"predictor":{`, `"spec":{"predictor":null,"x":{`},
	{"the stack label changed", `"gpuform.dev/stack":"`, `"gpuform.dev/stack":"x`},
	{"status first", `{"apiVersion"`, `{"status":{"a":1},"apiVersion"`},
	{"apiVersion last", `"apiVersion":`, `"apiVersionX":`},
	{"escaped key", `"spec":{`, `"sp\u0065c":{`},
	{"truncated", `}}`, `}`},
	{"a label another manager added", `"labels":{`, `"labels":{"example.com/owner":"platform",`},
	{"a label's value null", `"app.kubernetes.io/managed-by":"gpuform"`, `"app.kubernetes.io/managed-by":null`},
	{"a label twice, the last as desired", `"labels":{`, `"labels":{"gpuform.dev/stack":"other",`},
	{"an annotation's name escaped", `"gpuform.dev/address":`, `"gpuform.dev/addr\u0065ss":`},
	{"an annotation's value escaped", `"gpuform.dev/address":"`, `"gpuform.dev/address":"\u0074`},
	{"labels made a list", `"labels":{`, `"labels":[],"x":{`},
}

// An item settled as it streams is settled by Settle to the same slim
// copy; every item of an applied size S settles so; and no edit of an
// item's JSON makes the stream settle what Settle does not.
func TestSettleStreamMatchesSettle(t *testing.T) {
	c := newStreamCorpus(t)
	streamed := 0
	for i, raw := range c.items {
		if !c.checkStream(t, raw, c.gvks[i]) {
			t.Errorf("%.120q: an unchanged item was not settled as it streamed", raw)
		}
		streamed++
	}
	if streamed == 0 {
		t.Fatal("no items")
	}
	for _, e := range streamEditsJSON {
		t.Run(e.name, func(t *testing.T) {
			edited := 0
			for i, raw := range c.items {
				if !bytes.Contains(raw, []byte(e.old)) {
					continue
				}
				c.checkStream(t, bytes.Replace(raw, []byte(e.old), []byte(e.new), 1), c.gvks[i])
				edited++
			}
			if edited == 0 {
				t.Fatalf("no item has %q: the edit tests nothing", e.old)
			}
		})
	}
}

// An item settled as it streams keeps its desired object's labels and
// annotations maps, not copies of its own; an item whose labels differ
// (another manager's label) keeps its own, as they are.
func TestSettleStreamKeepsDesiredMaps(t *testing.T) {
	c := newStreamCorpus(t)
	ptr := func(v any) unsafe.Pointer { return reflect.ValueOf(v).UnsafePointer() }
	shared := 0
	for i, raw := range c.items {
		got, ok := newDecoder(true).settleStream(bytes.Clone(raw), c.gvks[i], c.settler)
		if !ok {
			t.Fatalf("%.120q: an unchanged item was not settled as it streamed", raw)
		}
		md, wmd := got.Object["metadata"].(map[string]any), c.settler.DesiredMetadata(engine.KeyOf(got))
		for _, f := range []string{"labels", "annotations"} {
			if w, ok := wmd[f]; ok {
				if ptr(md[f]) != ptr(w) {
					t.Errorf("%s: its %s are a copy of the desired object's", engine.KeyOf(got), f)
				}
				shared++
			}
		}
		edited := bytes.Replace(raw, []byte(`"labels":{`), []byte(`"labels":{"example.com/owner":"platform",`), 1)
		got, ok = newDecoder(true).settleStream(edited, c.gvks[i], c.settler)
		if !ok {
			t.Fatalf("%.120q: an item with another manager's label was not settled", edited)
		}
		md = got.Object["metadata"].(map[string]any)
		if labels, _ := md["labels"].(map[string]any); ptr(labels) == ptr(wmd["labels"]) || labels["example.com/owner"] != "platform" {
			t.Errorf("%s: labels %v, want its own with example.com/owner=platform", engine.KeyOf(got), labels)
		}
	}
	if shared == 0 {
		t.Fatal("no item settled with labels or annotations: the test proves nothing")
	}
}

func FuzzSettleStream(f *testing.F) {
	c := newStreamCorpus(f)
	seen := map[schema.GroupVersionKind]bool{}
	for i, raw := range c.items {
		if !seen[c.gvks[i]] {
			seen[c.gvks[i]] = true
			f.Add(raw, i)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, i int) {
		if i < 0 {
			i = -i
		}
		c.checkStream(t, raw, c.gvks[i%len(c.gvks)])
	})
}

// BenchmarkSettleItems settles every item of an applied size S (1,066
// objects, as the API server lists them) decoded whole and then settled,
// and settled as it streams, as a refresh does.
func BenchmarkSettleItems(b *testing.B) {
	c := newStreamCorpus(b)
	for _, mode := range []string{"whole", "stream"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := newDecoder(true)
				for i, raw := range c.items {
					if mode == "stream" {
						if _, ok := d.settleStream(raw, c.gvks[i], c.settler); ok {
							continue
						}
					}
					u, err := d.item(raw, c.gvks[i], true)
					if err != nil {
						b.Fatal(err)
					}
					if _, ok := c.settler.Settle(u); !ok {
						b.Fatalf("item %d did not settle", i)
					}
				}
			}
		})
	}
}

func TestSameStrings(t *testing.T) {
	want := map[string]any{"a": "1", "b": "two"}
	tests := []struct {
		json string
		same bool
	}{
		{`{"a":"1","b":"two"}`, true},
		{` { "b" : "two" , "a" : "1" } `, true},
		{`{"a":"1"}`, false},
		{`{"a":"1","b":"two","c":"3"}`, false},
		{`{"a":"1","a":"1"}`, false},
		{`{"a":"1","b":"tw\u006f"}`, false},
		{`{"\u0061":"1","b":"two"}`, false},
		{`{"a":1,"b":"two"}`, false},
		{`{"a":null,"b":"two"}`, false},
		{`{"a":"1","b":"two"`, false},
		{`["a","b"]`, false},
		{`{}`, false},
	}
	for _, tt := range tests {
		if got := sameStrings([]byte(tt.json), want); got != tt.same {
			t.Errorf("sameStrings(%s) = %v, want %v", tt.json, got, tt.same)
		}
	}
	if !sameStrings([]byte(`{}`), map[string]any{}) {
		t.Error("an empty object differs from an empty map")
	}
	if sameStrings([]byte(`{"a":"1"}`), map[string]any{"a": 1}) {
		t.Error("a string equals a desired number")
	}
}
