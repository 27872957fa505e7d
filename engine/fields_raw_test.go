package engine

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestFieldsScannerMatchesMaps checks that walking a managed-fields tree in
// its JSON form finds the removed paths, and that an entry holding the tree
// decoded into maps finds the same.
func TestFieldsScannerMatchesMaps(t *testing.T) {
	desired := map[string]any{
		"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "1", "dotted.key/x": "2"}},
		"spec":     map[string]any{"hard": map[string]any{"pods": "10"}, "list": []any{"a"}, "n": int64(1)},
	}
	tests := []struct {
		name, tree string
		want       []string // paths joined by "/"
	}{
		{"everything still desired", `{"f:metadata":{"f:labels":{"f:a":{},"f:dotted.key/x":{}}},"f:spec":{"f:hard":{"f:pods":{}},"f:list":{},"f:n":{}}}`, nil},
		{"a label no longer desired", `{"f:metadata":{"f:labels":{".":{},"f:a":{},"f:old":{}}}}`, []string{"metadata/labels/old"}},
		{"a subtree no longer desired", `{"f:spec":{"f:gone":{".":{},"f:a":{},"f:b":{"f:c":{}}}}}`, []string{"spec/gone/a", "spec/gone/b/c"}},
		{"below a desired list or scalar", `{"f:spec":{"f:list":{"k:{\"name\":\"a\"}":{"f:x":{}}},"f:n":{"f:deeper":{}}}}`, nil},
		{"name and namespace are identity", `{"f:metadata":{"f:name":{},"f:namespace":{}}}`, nil},
		{"escaped names", `{"f:spec":{"f:hard":{"f:pods":{},"f:requests.nvidia.com\/gpu":{},"f:\"q\"":{}}}}`, []string{`spec/hard/"q"`, "spec/hard/requests.nvidia.com/gpu"}},
		{"whitespace", "{ \"f:spec\" : {\n\t\"f:old\" : { } , \"f:hard\":{} } }", []string{"spec/old"}},
		{"a leaf that is not an object", `{"f:spec":{"f:old":null,"f:older":12,"f:oldest":"x"}}`, []string{"spec/old", "spec/older", "spec/oldest"}},
		{"list keys skipped", `{"f:spec":{"k:{\"a\":\"}\"}":{"f:x":{}},"v:\"{\"":{},"i:0":{},"f:old":{}}}`, []string{"spec/old"}},
		{"empty", `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tree map[string]any
			if err := json.Unmarshal([]byte(tt.tree), &tree); err != nil {
				t.Fatal(err)
			}
			var fromMaps, fromRaw [][]string
			collectEntry(map[string]any{"fieldsV1": tree}, desired, &fromMaps)
			s := fieldsScanner{b: tt.tree}
			s.collectRemoved(nil, desired, &fromRaw)
			if s.bad {
				t.Fatal("the scanner found the JSON malformed")
			}
			got, maps := joinPaths(fromRaw), joinPaths(fromMaps)
			if !reflect.DeepEqual(got, maps) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("raw walk %q, map walk %q, want %q", got, maps, tt.want)
			}
		})
	}
}

// TestFieldsScannerMalformed checks that broken JSON ends the walk without
// a panic and is reported.
func TestFieldsScannerMalformed(t *testing.T) {
	for _, tree := range []string{``, `{`, `{"f:a"`, `{"f:a":{}`, `{"f:a":{},}`, `{"f:a" {}}`, `{"f:a":{"f:b":}}`, `[]`, `{"f:a":"unterminated}`} {
		s := fieldsScanner{b: tree}
		var out [][]string
		s.collectRemoved(nil, map[string]any{}, &out)
		if !s.bad && tree != `[]` {
			t.Errorf("%q: not reported as malformed (found %q)", tree, joinPaths(out))
		}
	}
}

func joinPaths(paths [][]string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, strings.Join(p, "/"))
	}
	sort.Strings(out)
	return out
}
