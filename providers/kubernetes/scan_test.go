package kubernetes

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// scanInputs are items whose JSON exercises the scanner: escapes,
// characters outside ASCII, every kind of number, nesting, whitespace,
// repeated keys, and malformed JSON of every kind.
var scanInputs = []string{
	`{}`,
	`{"a":1,"b":-2,"c":0,"d":-0,"e":1.5,"f":1e3,"g":1E-2,"h":-1.25e+2,"i":9223372036854775807,"j":-9223372036854775808}`,
	`{"big":9223372036854775808,"neg":-9223372036854775809,"huge":123456789012345678901234567890}`,
	`{"s":"plain","e":"","u":"caf\u00e9","q":"a\"b","bs":"a\\b","sl":"a\/b","nl":"a\nb","sur":"\ud83d\ude00","raw":"é漢字"}`,
	`{"t":true,"f":false,"n":null,"l":[],"m":{},"ll":[[1,[2,{"x":[]}]],{"y":null}]}`,
	" \t\n\r{ \"a\" : [ 1 , 2 ] , \"b\" : { \"c\" : \"d\" } } \n",
	`{"dup":1,"dup":"two"}`,
	`{"k\u0065y":"escaped key","a\"b":1}`,
	`{"metadata":{"name":"m","labels":{"gpuform.dev/stack":"s"}},"spec":{"x":[{"a":"1"},{"a":"2"}]}}`,
	`{"bad":"\x80\xff"}`,
	``,
	`{`,
	`{"a"}`,
	`{"a":}`,
	`{"a":1,}`,
	`{"a":1 "b":2}`,
	`{"a":[1,]}`,
	`{"a":[1 2]}`,
	`{"a":01}`,
	`{"a":-}`,
	`{"a":1.}`,
	`{"a":.5}`,
	`{"a":1e}`,
	`{"a":+1}`,
	`{"a":tru}`,
	`{"a":nul}`,
	`{"a":"unterminated}`,
	"{\"a\":\"ctl\x01\"}",
	`{"a":"\q"}`,
	`{"a":"\u12"}`,
	`{"a":1}x`,
	`{"a":1}{}`,
	`{1:2}`,
	`[1]`,
	`"s"`,
	`{"a":1e999}`,
	`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

// The scanner builds exactly what client-go's JSON decoding builds for an
// item, and refuses what it refuses.
func TestScanMatchesClientGo(t *testing.T) {
	for _, in := range scanInputs {
		checkScan(t, []byte(in))
	}
}

// checkScan fails unless decoding raw as an item (untrimmed) gives what
// k8s.io/apimachinery's JSON decoding gives, or both refuse it.
func checkScan(t *testing.T, raw []byte) {
	t.Helper()
	var want any
	wantErr := utiljson.Unmarshal(raw, &want)
	d := newDecoder(false)
	s := scanner{b: raw}
	got := s.value(d)
	s.end()
	switch {
	case wantErr != nil && s.err == nil:
		t.Errorf("%.80q: scanned to %v, client-go refuses it: %v", raw, got, wantErr)
	case wantErr == nil && s.err != nil:
		t.Errorf("%.80q: scanner refuses it (%v), client-go decodes %v", raw, s.err, want)
	case wantErr == nil && !reflect.DeepEqual(got, want):
		t.Errorf("%.80q:\n got %#v\nwant %#v", raw, got, want)
	}
	if _, ok := want.(map[string]any); ok && wantErr == nil {
		// As a list item, through the decoder's own entry point.
		u, err := d.item(raw, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false)
		if err != nil {
			t.Errorf("%.80q: item: %v", raw, err)
		} else if u.GetKind() != "ConfigMap" && want.(map[string]any)["kind"] == nil {
			t.Errorf("%.80q: item lost its kind", raw)
		}
		// As a Node, which a refresh trims (nodeObject): client-go's
		// decoding of it, less what trimNode drops.
		n, err := d.item(raw, nodeGVK, false)
		if err != nil {
			t.Fatalf("%.80q: item as a Node: %v", raw, err)
		}
		ref := &unstructured.Unstructured{Object: trimNode(runtime.DeepCopyJSONValue(want).(map[string]any))}
		if ref.GetKind() == "" {
			ref.SetGroupVersionKind(nodeGVK)
		}
		if !reflect.DeepEqual(n.Object, ref.Object) {
			t.Errorf("%.80q as a Node:\n got %#v\nwant %#v", raw, n.Object, ref.Object)
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, in := range scanInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkScan(t, raw)
	})
}

// listInputs are LIST responses for the cutter: the items cut out of
// every structure JSON allows, and every way a list can be malformed.
var listInputs = []string{
	`{"kind":"List","metadata":{"continue":"c\u003d"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b\"}"}}]}`,
	`{"items":null}`,
	`{"items":[]}`,
	`{}`,
	` { "items" : [ { "a" : [ "]" , "}" , "\\" ] } ] , "x" : [ 1 , { } ] } `,
	`{"it\u0065ms":[{"a":1}]}`,
	`{"items":[{"a":1}],"tail":"x"}`,
	`{"items":[{"a":1}]}{}`,
	`{"items":[{"a":1}]} x`,
	`{"items":[{"a":1},]}`,
	`{"items":[,{"a":1}]}`,
	`{"items":[{"a":1} {"b":2}]}`,
	`{"items":"no"}`,
	`{"items":[1]}`,
	`{"items":[{"a":1}],}`,
	`{"items":[{"a":1}]`,
	`{"metadata":{"continue":01},"items":[]}`,
	`{"kind":tru,"items":[]}`,
	`{"kind":,"items":[]}`,
	`{"items":[{"a":"unterminated]}`,
	`[]`,
	``,
	`{"items":[{"a":"` + strings.Repeat("x", 300<<10) + `"}]}`,
}

// The list's items are cut out of a response read whole, byte by byte or
// in halves to the same objects; a response client-go decodes gives its
// items, and one it refuses is an error.
func TestCutMatchesClientGo(t *testing.T) {
	for _, in := range listInputs {
		checkList(t, []byte(in))
	}
}

func checkList(t *testing.T, body []byte) {
	t.Helper()
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	got, cont, err := decodeList(body, gvk, false)
	for _, dec := range listDecoders[1:] {
		got2, cont2, err2 := dec.decode(string(body), gvk, false)
		if (err == nil) != (err2 == nil) || cont != cont2 || !reflect.DeepEqual(got, got2) {
			t.Fatalf("%.80q: %s gives %d items (%v), whole %d items (%v)", body, dec.name, len(got2), err2, len(got), err)
		}
	}
	var want map[string]any
	if uerr := utiljson.Unmarshal(body, &want); uerr != nil || want == nil || duplicateKeys(body) {
		if uerr != nil && err == nil {
			t.Errorf("%.80q: decoded %d items, client-go refuses it: %v", body, len(got), uerr)
		}
		return
	}
	items, isList := want["items"].([]any)
	if want["items"] != nil && !isList {
		if err == nil {
			t.Errorf("%.80q: items is no list, but decoded", body)
		}
		return
	}
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			if err == nil {
				t.Errorf("%.80q: item %d is no object, but decoded", body, i)
			}
			return
		}
		if m["kind"] == nil {
			m["kind"], m["apiVersion"] = "ConfigMap", "v1"
		}
	}
	if err != nil {
		t.Fatalf("%.80q: %v; client-go decodes it", body, err)
	}
	if len(got) != len(items) {
		t.Fatalf("%.80q: %d items, client-go %d", body, len(got), len(items))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i].Object, items[i]) {
			t.Errorf("%.80q: item %d\n got %#v\nwant %#v", body, i, got[i].Object, items[i])
		}
	}
	md, _ := want["metadata"].(map[string]any)
	if c, _ := md["continue"].(string); c != cont {
		t.Errorf("%.80q: continue %q, client-go %q", body, cont, c)
	}
}

// duplicateKeys reports whether the list's object repeats a field name
// (client-go keeps the last, the cutter reads both).
func duplicateKeys(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := tok.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

func FuzzCut(f *testing.F) {
	for _, in := range listInputs[:len(listInputs)-1] {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkList(t, body)
	})
}
