package kubernetes

import (
	"reflect"
	"strings"
	"testing"

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
