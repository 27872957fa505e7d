package kinds

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// ListMapKeys returns the fields that identify an element of the list at
// path in an object of kind gvk, or nil for a list without keys (atomic,
// a set, or unknown). path is the list's field path with "[]" for each
// list level above it: "spec.resourceGroups[].flavors".
//
// The keys are the API's own: for a CRD, its schema's
// x-kubernetes-list-map-keys (crdListKeys, generated from the upstream
// CRDs); for a Kubernetes kind, the patchMergeKey of its Go type in
// k8s.io/api (name for containers and env), read from client-go's scheme.
func ListMapKeys(gvk schema.GroupVersionKind, path string) []string {
	if keys, ok := crdListKeys(gvk.GroupKind(), path); ok {
		return keys
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	return mergeKey(reflect.TypeOf(obj), strings.Split(path, "."))
}

// crdListKeys looks path up in crdListKeyTable: its keys, and whether the
// table has kind gk at all. A line for the path itself comes first; else a
// line "*.field" gives the keys of every list of the kind named field.
func crdListKeys(gk schema.GroupKind, path string) ([]string, bool) {
	prefix := gk.Group + "/" + gk.Kind + " "
	field := "*." + path[strings.LastIndexByte(path, '.')+1:]
	known := false
	var byField []string
	for line := range strings.Lines(crdListKeyTable) {
		rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), prefix)
		if !ok {
			continue
		}
		known = true
		switch p, keys, _ := strings.Cut(rest, " "); p {
		case path:
			return strings.Split(keys, ","), true
		case field:
			byField = strings.Split(keys, ",")
		}
	}
	return byField, known
}

// mergeKey follows the JSON field path through Go type t and returns the
// patchMergeKey of the list field at its end.
func mergeKey(t reflect.Type, path []string) []string {
	var tag reflect.StructTag
	for _, seg := range path {
		name, elems := strings.CutSuffix(seg, "[]")
		f, ok := jsonField(deref(t), name)
		if !ok {
			return nil
		}
		t, tag = f.Type, f.Tag
		if elems {
			if deref(t).Kind() != reflect.Slice {
				return nil
			}
			t = deref(t).Elem()
		}
	}
	if deref(t).Kind() != reflect.Slice {
		return nil
	}
	if k := tag.Get("patchMergeKey"); k != "" {
		return []string{k}
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField finds the field of struct t that JSON names name, looking into
// inlined (embedded) structs.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tagName, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tagName == name {
			return f, true
		}
		if tagName == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			if g, ok := jsonField(deref(f.Type), name); ok {
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}
