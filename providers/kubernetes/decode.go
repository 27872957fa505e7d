package kubernetes

import (
	"fmt"
	"strconv"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
func decodeList(data []byte, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, string, error) {
	it := jsoniter.ParseBytes(jsoniter.ConfigCompatibleWithStandardLibrary, data)
	var items []*unstructured.Unstructured
	cont := ""
	if it.WhatIsNext() != jsoniter.ObjectValue {
		return nil, "", fmt.Errorf("decode %s list: not a JSON object", gvk.Kind)
	}
	it.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
		switch key {
		case "metadata":
			meta, ok := readValue(it).(map[string]any)
			if ok {
				cont, _ = meta["continue"].(string)
			}
		case "items":
			if it.WhatIsNext() == jsoniter.NilValue {
				it.ReadNil()
				return true
			}
			it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
				obj, ok := readValue(it).(map[string]any)
				if !ok {
					it.ReportError("decode list", "an item is not an object")
					return false
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
		return nil, "", fmt.Errorf("decode %s list: %w", gvk.Kind, it.Error)
	}
	return items, cont, nil
}

// readValue reads one JSON value as unstructured content.
func readValue(it *jsoniter.Iterator) any {
	switch it.WhatIsNext() {
	case jsoniter.ObjectValue:
		m := map[string]any{}
		it.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
			m[key] = readValue(it)
			return it.Error == nil
		})
		return m
	case jsoniter.ArrayValue:
		a := []any{}
		it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
			a = append(a, readValue(it))
			return it.Error == nil
		})
		return a
	case jsoniter.StringValue:
		return it.ReadString()
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
