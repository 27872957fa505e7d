package kubernetes

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// decodeList decodes a JSON list response into its items, each with
// apiVersion and kind set to gvk (list items carry neither), and returns
// the list's continue token.
//
// It builds the same values as client-go's unstructured JSON decoding
// (map[string]any, []any, string, int64 for integers, float64, bool, nil)
// about three times faster and with half the garbage: refresh decodes
// every object of the stack, and with encoding/json that was the largest
// cost of a plan. It reads tokens with json-iterator, the JSON library
// Kubernetes itself decoded with for years.
//
// With trim, each item keeps only what the diff reads of a stack's own
// objects: no status, and only field manager gpuform's managedFields
// entries (kept whole). Repeated strings (field names, manager names,
// versions) share one copy across the list, since these objects stay in
// memory for the whole plan.
func decodeList(data []byte, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
	return decodeListFrom(jsoniter.ParseBytes(jsoniter.ConfigCompatibleWithStandardLibrary, data), gvk, trim)
}

// decodeStreamBuffer is the read buffer of decodeListStream.
const decodeStreamBuffer = 64 << 10

// decodeListStream is decodeList reading from r as the response arrives:
// the items are decoded while the API server is still sending the rest,
// and the raw list is never held whole.
func decodeListStream(r io.Reader, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
	return decodeListFrom(jsoniter.Parse(jsoniter.ConfigCompatibleWithStandardLibrary, r, decodeStreamBuffer), gvk, trim)
}

func decodeListFrom(it *jsoniter.Iterator, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
	d := &decoder{strings: map[string]string{}}
	var items []*unstructured.Unstructured
	cont := ""
	if it.WhatIsNext() != jsoniter.ObjectValue {
		if it.Error != nil && it.Error != io.EOF {
			return nil, "", fmt.Errorf("decode %s list: %w", gvk.Kind, it.Error)
		}
		return nil, "", fmt.Errorf("decode %s list: not a JSON object", gvk.Kind)
	}
	it.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
		switch key {
		case "metadata":
			meta, ok := d.value(it).(map[string]any)
			if ok {
				cont, _ = meta["continue"].(string)
			}
		case "items":
			if it.WhatIsNext() == jsoniter.NilValue {
				it.ReadNil()
				return true
			}
			it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
				obj, ok := d.value(it).(map[string]any)
				if !ok {
					it.ReportError("decode list", "an item is not an object")
					return false
				}
				if trim {
					trimObject(obj)
				}
				u := &unstructured.Unstructured{Object: obj}
				if u.GetKind() == "" {
					u.SetGroupVersionKind(gvk)
				}
				items = append(items, u)
				return true
			})
		default:
			it.Skip()
		}
		return it.Error == nil
	})
	if it.Error != nil {
		// A list cut short ends in io.EOF: an error like any other.
		return nil, "", fmt.Errorf("decode %s list: %w", gvk.Kind, it.Error)
	}
	return items, cont, nil
}

// decoder reads JSON values as unstructured content, interning strings.
type decoder struct {
	strings map[string]string
}

// intern returns the one copy of s this decoder keeps.
func (d *decoder) intern(s string) string {
	if len(s) > 64 {
		return s
	}
	if c, ok := d.strings[s]; ok {
		return c
	}
	d.strings[s] = s
	return s
}

// value reads one JSON value as unstructured content.
func (d *decoder) value(it *jsoniter.Iterator) any {
	switch it.WhatIsNext() {
	case jsoniter.ObjectValue:
		m := map[string]any{}
		it.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
			m[d.intern(key)] = d.value(it)
			return it.Error == nil
		})
		return m
	case jsoniter.ArrayValue:
		a := []any{}
		it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
			a = append(a, d.value(it))
			return it.Error == nil
		})
		return a
	case jsoniter.StringValue:
		return d.intern(it.ReadString())
	case jsoniter.NumberValue:
		n := it.ReadNumber()
		if d := strings.TrimPrefix(string(n), "-"); len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9' {
			it.ReportError("decode number", "leading zero in "+string(n))
			return nil
		}
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			it.ReportError("decode number", err.Error())
		}
		return f
	case jsoniter.BoolValue:
		return it.ReadBool()
	case jsoniter.NilValue:
		it.ReadNil()
		return nil
	default:
		it.ReportError("decode value", "invalid JSON")
		return nil
	}
}

// trimObject drops what the diff never reads of a stack's own object: its
// status and the managedFields entries of other field managers.
func trimObject(obj map[string]any) {
	delete(obj, "status")
	md, _ := obj["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	if len(entries) == 0 {
		return
	}
	kept := entries[:0]
	for _, e := range entries {
		if mf, _ := e.(map[string]any); mf["manager"] == engine.FieldManager {
			kept = append(kept, e)
		}
	}
	md["managedFields"] = kept
}
