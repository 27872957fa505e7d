package kubernetes

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestDecodeListMatchesClientGo checks that decodeList builds exactly what
// client-go's unstructured JSON decoding builds, items and continue token.
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
		t.Run(tt.name, func(t *testing.T) {
			got, cont, err := decodeList([]byte(tt.body), gvk, false)
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
		if items, _, err := decodeList([]byte(body), gvk, false); err == nil {
			t.Errorf("decodeList(%q) = %d items, want an error", body, len(items))
		} else if !strings.Contains(err.Error(), "Namespace") {
			t.Errorf("decodeList(%q) error %q does not say what was decoded", body, err)
		}
	}
}

// TestDecodeListTrim checks that trimming keeps everything of a stack's
// object but its status and other managers' managedFields entries.
func TestDecodeListTrim(t *testing.T) {
	body := `{"kind":"ResourceQuotaList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"gpuform","namespace":"a",
		"managedFields":[{"manager":"gpuform","operation":"Apply","fieldsV1":{"f:spec":{"f:hard":{}}}},
		{"manager":"kube-controller-manager","operation":"Update","subresource":"status","fieldsV1":{"f:status":{}}},
		{"manager":"gpuform","operation":"Update","fieldsV1":{"f:metadata":{}}}]},
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
	if len(mfs) != 2 {
		t.Fatalf("managedFields = %v, want gpuform's two entries", mfs)
	}
	for _, e := range mfs {
		if m := e.(map[string]any)["manager"]; m != "gpuform" {
			t.Errorf("kept the entry of %v", m)
		}
	}
	if !reflect.DeepEqual(got["spec"], full[0].Object["spec"]) || got["metadata"].(map[string]any)["name"] != "gpuform" {
		t.Errorf("trim changed the rest: %v", got)
	}
	if _, ok := full[0].Object["status"]; !ok {
		t.Error("untrimmed decode lost the status")
	}
}

// TestPeekContinue checks that the continue token is found without reading
// the items, and agrees with decodeList's.
func TestPeekContinue(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"abc=="},"items":[{"metadata":{"name":"a"}}]}`, "abc=="},
		{`{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}`, ""},
		{`{"kind":"NamespaceList","metadata":{"continue":"x"},"items":[{"broken`, "x"},
		{`[]`, ""},
		{``, ""},
	} {
		if got := peekContinue([]byte(tt.body)); got != tt.want {
			t.Errorf("peekContinue(%q) = %q, want %q", tt.body, got, tt.want)
		}
		if _, cont, err := decodeList([]byte(tt.body), schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, false); err == nil && cont != tt.want {
			t.Errorf("decodeList(%q) continue = %q, peekContinue %q", tt.body, cont, tt.want)
		}
	}
}
