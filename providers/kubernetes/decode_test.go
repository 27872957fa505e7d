package kubernetes

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// listDecoders are the ways a list is decoded: whole (decodeList), and as
// a stream arriving in pieces (decodeListStream), one byte and half a
// buffer at a time.
var listDecoders = []struct {
	name   string
	decode func(body string, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error)
}{
	{"bytes", func(body string, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
		return decodeList([]byte(body), gvk, trim)
	}},
	{"stream by byte", func(body string, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
		return decodeListStream(iotest.OneByteReader(strings.NewReader(body)), gvk, trim)
	}},
	{"stream by halves", func(body string, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
		return decodeListStream(iotest.HalfReader(strings.NewReader(body)), gvk, trim)
	}},
}

// TestDecodeListMatchesClientGo checks that decodeList and
// decodeListStream build exactly what client-go's unstructured JSON
// decoding builds, items and continue token.
func TestDecodeListMatchesClientGo(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}
	item := `{"metadata":{"name":"m-1","namespace":"team-1","labels":{"gpuform.dev/stack":"large"},
		"resourceVersion":"42","generation":3,"creationTimestamp":"2026-11-30T10:00:00Z",
		"managedFields":[{"manager":"gpuform","operation":"Apply","apiVersion":"v1","time":"2026-11-30T10:00:00Z",
		"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:predictor":{".":{},"f:minReplicas":{}}}}}]},
		"spec":{"predictor":{"minReplicas":1,"maxReplicas":9007199254740993,"scale":0.5,"big":1e300,"neg":-7,
		"model":{"modelFormat":{"name":"pytorch"},"storageUri":"s3://m/\u00e9\"q\"\\n"},"empty":[],"obj":{},"nil":null,"on":true,"off":false}}}`
	tests := []struct {
		name, body, cont string
		items            int
	}{
		{"items and continue", `{"kind":"InferenceServiceList","apiVersion":"serving.kserve.io/v1beta1","metadata":{"resourceVersion":"9","continue":"abc=="},"items":[` + item + `,` + item + `]}`, "abc==", 2},
		{"last page", `{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceServiceList","metadata":{"resourceVersion":"9"},"items":[` + item + `]}`, "", 1},
		{"no items", `{"kind":"InferenceServiceList","apiVersion":"serving.kserve.io/v1beta1","metadata":{},"items":[]}`, "", 0},
		{"null items", `{"kind":"InferenceServiceList","apiVersion":"serving.kserve.io/v1beta1","metadata":{},"items":null}`, "", 0},
		{"items carry their kind", `{"kind":"InferenceServiceList","apiVersion":"serving.kserve.io/v1beta1","metadata":{},"items":[{"kind":"InferenceService","apiVersion":"serving.kserve.io/v1beta1","metadata":{"name":"x"}}]}`, "", 1},
	}
	for _, tt := range tests {
		for _, dec := range listDecoders {
			t.Run(tt.name+"/"+dec.name, func(t *testing.T) {
				got, cont, err := dec.decode(tt.body, gvk, false)
				if err != nil {
					t.Fatal(err)
				}
				var want unstructured.UnstructuredList
				if err := want.UnmarshalJSON([]byte(tt.body)); err != nil {
					t.Fatal(err)
				}
				if cont != tt.cont || cont != want.GetContinue() {
					t.Errorf("continue = %q, client-go %q, want %q", cont, want.GetContinue(), tt.cont)
				}
				if len(got) != tt.items || len(want.Items) != tt.items {
					t.Fatalf("items = %d, client-go %d, want %d", len(got), len(want.Items), tt.items)
				}
				for i := range got {
					if !reflect.DeepEqual(got[i].Object, want.Items[i].Object) {
						t.Errorf("item %d:\n got %#v\nwant %#v", i, got[i].Object, want.Items[i].Object)
					}
				}
			})
		}
	}
}

// TestDecodeListRejectsBrokenJSON checks that a truncated or malformed
// response is an error, never a partial list.
func TestDecodeListRejectsBrokenJSON(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	for _, body := range []string{
		``,
		`[]`,
		`{"items":[{"metadata":{"name":"a"}}`,
		`{"items":[{"metadata":{"name":"a"}},]}`,
		`{"items":[1]}`,
		`{"items":[{"a":01}]}`,
		`{"items":[{"a":tru}]}`,
	} {
		for _, dec := range listDecoders {
			if items, _, err := dec.decode(body, gvk, false); err == nil {
				t.Errorf("%s: decode(%q) = %d items, want an error", dec.name, body, len(items))
			} else if !strings.Contains(err.Error(), "Namespace") {
				t.Errorf("%s: decode(%q) error %q does not say what was decoded", dec.name, body, err)
			}
		}
	}
}

// TestDecodeListTrim checks that trimming keeps everything of a stack's
// object but its status and the status subresource's managedFields
// entries: another manager's entry outside the status is kept, for the
// kinds gpuform owns whole (engine.ForeignPaths).
func TestDecodeListTrim(t *testing.T) {
	body := `{"kind":"ResourceQuotaList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"gpuform","namespace":"a",
		"managedFields":[{"manager":"gpuform","operation":"Apply","fieldsV1":{"f:spec":{"f:hard":{}}}},
		{"manager":"kube-controller-manager","operation":"Update","subresource":"status","fieldsV1":{"f:status":{}}},
		{"manager":"gpuform","operation":"Update","fieldsV1":{"f:metadata":{}}},
		{"manager":"intruder","operation":"Apply","fieldsV1":{"f:spec":{"f:scopeSelector":{}}}}]},
		"spec":{"hard":{"pods":"10"}},"status":{"used":{"pods":"3"}}}]}`
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ResourceQuota"}
	items, _, err := decodeList([]byte(body), gvk, true)
	if err != nil {
		t.Fatal(err)
	}
	full, _, _ := decodeList([]byte(body), gvk, false)
	got := items[0].Object
	if _, ok := got["status"]; ok {
		t.Error("status kept")
	}
	mfs := got["metadata"].(map[string]any)["managedFields"].([]any)
	if len(mfs) != 3 {
		t.Fatalf("managedFields = %v, want gpuform's two entries and the intruder's", mfs)
	}
	for i, want := range []string{"gpuform", "gpuform", "intruder"} {
		if m := mfs[i].(map[string]any)["manager"]; m != want {
			t.Errorf("entry %d is %v's, want %s's", i, m, want)
		}
	}
	// The kept entries' fieldsV1 stay JSON, in a string: the object
	// deep-copies, and reads its managedFields typed.
	if fv, ok := mfs[0].(map[string]any)["fieldsV1"].(string); !ok || fv != `{"f:spec":{"f:hard":{}}}` {
		t.Errorf("fieldsV1 = %#v, want its JSON", mfs[0].(map[string]any)["fieldsV1"])
	}
	for _, u := range items {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("a trimmed object does not deep-copy: %v", r)
				}
			}()
			if c := u.DeepCopy(); !reflect.DeepEqual(c.Object, u.Object) || len(u.GetManagedFields()) != 3 {
				t.Errorf("deep copy %v, managedFields %v", c.Object, u.GetManagedFields())
			}
		}()
	}
	if !reflect.DeepEqual(got["spec"], full[0].Object["spec"]) || got["metadata"].(map[string]any)["name"] != "gpuform" {
		t.Errorf("trim changed the rest: %v", got)
	}
	if _, ok := full[0].Object["status"]; !ok {
		t.Error("untrimmed decode lost the status")
	}
}

// TestDecodeListStreamReadError checks that a stream that breaks off
// mid-list is an error carrying the read error, never a partial list.
func TestDecodeListStreamReadError(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	broken := errors.New("connection reset by peer")
	body := `{"kind":"NamespaceList","metadata":{},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`
	for _, cut := range []int{0, 10, 40, len(body) - 1} {
		r := io.MultiReader(strings.NewReader(body[:cut]), iotest.ErrReader(broken))
		items, _, err := decodeListStream(r, gvk, false)
		if !errors.Is(err, broken) {
			t.Errorf("cut at %d: %d items, error %v, want the read error", cut, len(items), err)
		}
	}
}

// TestDecodeListManyItems checks a list of many batches of items: the
// workers' objects come back complete and in list order, and a bad item
// deep in the list fails the whole list.
func TestDecodeListManyItems(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	n := 10*itemBatch + 7
	var b strings.Builder
	b.WriteString(`{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"metadata":{"name":"ns-%d","labels":{"i":"%d"}},"status":{"phase":"Active"}}`, i, i)
	}
	b.WriteString(`]}`)
	body := b.String()
	for _, dec := range listDecoders {
		items, _, err := dec.decode(body, gvk, true)
		if err != nil {
			t.Fatalf("%s: %v", dec.name, err)
		}
		if len(items) != n {
			t.Fatalf("%s: %d items, want %d", dec.name, len(items), n)
		}
		for i, u := range items {
			if u.GetName() != fmt.Sprintf("ns-%d", i) || u.GetLabels()["i"] != fmt.Sprint(i) || u.GetKind() != "Namespace" {
				t.Fatalf("%s: item %d is %s %v", dec.name, i, u.GetName(), u.GetLabels())
			}
			if _, ok := u.Object["status"]; ok {
				t.Fatalf("%s: item %d kept its status", dec.name, i)
			}
		}
		bad := strings.Replace(body, `"ns-1000"`, `"ns-1000",01`, 1)
		if items, _, err := dec.decode(bad, gvk, true); err == nil || !strings.Contains(err.Error(), "Namespace") {
			t.Errorf("%s: a bad item 1000 gave %d items, error %v", dec.name, len(items), err)
		}
	}
}

// Trimming also leaves out the metadata nothing reads after a refresh
// (creationTimestamp, generation; the time and type of gpuform's
// managedFields entries) and keeps what the diff, apply, a saved plan's
// re-check, the stack's record (the uid) and the outputs do read.
func TestDecodeListTrimUnreadMetadata(t *testing.T) {
	body := `{"items":[{"metadata":{"name":"q","namespace":"a","uid":"6f1c2b1e","resourceVersion":"42","generation":3,
		"creationTimestamp":"2026-12-01T17:56:08Z","labels":{"gpuform.dev/stack":"s"},"annotations":{"a":"1"},
		"managedFields":[{"manager":"gpuform","operation":"Apply","apiVersion":"v1","time":"2026-12-01T17:56:08Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},
		"spec":{"hard":{"pods":"10"}}}]}`
	items, _, err := decodeList([]byte(body), schema.GroupVersionKind{Version: "v1", Kind: "ResourceQuota"}, true)
	if err != nil {
		t.Fatal(err)
	}
	md := items[0].Object["metadata"].(map[string]any)
	for _, k := range []string{"creationTimestamp", "generation"} {
		if _, ok := md[k]; ok {
			t.Errorf("metadata.%s kept", k)
		}
	}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "labels", "annotations", "managedFields"} {
		if _, ok := md[k]; !ok {
			t.Errorf("metadata.%s dropped", k)
		}
	}
	e := md["managedFields"].([]any)[0].(map[string]any)
	for _, k := range []string{"time", "fieldsType"} {
		if _, ok := e[k]; ok {
			t.Errorf("managedFields[0].%s kept", k)
		}
	}
	for _, k := range []string{"manager", "operation", "apiVersion", "fieldsV1"} {
		if _, ok := e[k]; !ok {
			t.Errorf("managedFields[0].%s dropped", k)
		}
	}
	if !engine.Owned(items[0], "s") {
		t.Error("the trimmed object is no longer gpuform's")
	}
}

// A stack's objects share one copy of each small map of scalars that
// recurs (resources, selectors, label sets), with equal content only; the
// untrimmed decode (Nodes, foreign objects) shares nothing.
func TestDecodeListSharesLeaves(t *testing.T) {
	body := `{"items":[
		{"metadata":{"name":"a"},"spec":{"sel":{"pool":"x"},"res":{"gpu":"1","n":2},"f":{"v":1.5},"b":{"ok":true,"z":null}}},
		{"metadata":{"name":"b"},"spec":{"sel":{"pool":"x"},"res":{"gpu":"1","n":2},"f":{"v":1.5},"b":{"ok":true,"z":null}}},
		{"metadata":{"name":"c"},"spec":{"sel":{"pool":"y"},"res":{"gpu":"1","n":"2"},"f":{"v":1.5},"b":{"ok":false,"z":null}}}]}`
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	leaf := func(u *unstructured.Unstructured, k string) map[string]any {
		return u.Object["spec"].(map[string]any)[k].(map[string]any)
	}
	same := func(a, b map[string]any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	items, _, err := decodeList([]byte(body), gvk, true)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := items[0], items[1], items[2]
	for _, k := range []string{"sel", "res", "b"} {
		if !same(leaf(a, k), leaf(b, k)) {
			t.Errorf("equal %s maps are not shared", k)
		}
		if same(leaf(a, k), leaf(c, k)) {
			t.Errorf("different %s maps are shared: %v and %v", k, leaf(a, k), leaf(c, k))
		}
	}
	if same(leaf(a, "f"), leaf(b, "f")) {
		t.Error("a map holding a float is shared")
	}
	if !reflect.DeepEqual(leaf(c, "res"), map[string]any{"gpu": "1", "n": "2"}) {
		t.Errorf("res of c = %v", leaf(c, "res"))
	}
	full, _, err := decodeList([]byte(body), gvk, false)
	if err != nil {
		t.Fatal(err)
	}
	if same(leaf(full[0], "sel"), leaf(full[1], "sel")) {
		t.Error("the untrimmed decode shares maps")
	}
}
