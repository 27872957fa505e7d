package engine

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine/kinds"
)

// listElement prefixes a path element that names a list element by its
// keys ("\x00[h100]"), which FormatPath prints as it is, where any other
// element in brackets is a map key it quotes.
const listElement = "\x00"

// listKeys names the elements of an object's keyed lists in field paths,
// from the keys the kind's schema gives each list (kinds.ListMapKeys).
type listKeys struct {
	gvk schema.GroupVersionKind
}

// keyed returns the path element of each element of list (at path, a
// path of DiffFields) by its keys, "[h100]" or
// "[containerPort=80,protocol=TCP]", when the kind's schema gives the list
// keys and every element has them, distinct; else nil (by index).
func (lk *listKeys) keyed(path []string, list []any) []string {
	keys := kinds.ListMapKeys(lk.gvk, schemaPath(path))
	if len(keys) == 0 {
		return nil
	}
	out := make([]string, len(list))
	seen := make(map[string]bool, len(list))
	for i, e := range list {
		m, _ := e.(map[string]any)
		label, has := keyLabel(m, keys)
		if !has || seen[label] {
			return nil
		}
		seen[label] = true
		out[i] = listElement + "[" + label + "]"
	}
	return out
}

// schemaPath is a DiffFields path as kinds.ListMapKeys takes it: field
// names joined by dots, each list level as "[]" ("spec.resourceGroups[].flavors").
func schemaPath(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if isIndex(p) || strings.HasPrefix(p, listElement) {
			b.WriteString("[]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// keyLabel is how a path names element m of a list with keys: the value of
// its one key when a string (h100), else key=value pairs joined by commas
// (containerPort=80, which no index reads like); a string that is not a
// plain name (letters, digits and . _ / - : +, not all digits) is quoted.
// It returns false when m lacks a key.
func keyLabel(m map[string]any, keys []string) (string, bool) {
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, ok := m[k]
		if !ok || v == nil {
			return "", false
		}
		s := fmt.Sprint(v)
		_, isString := v.(string)
		if isString && !plainKey(s) {
			s = strconv.Quote(s)
		}
		parts[i] = s
		if len(keys) > 1 || !isString { // [containerPort=80], never [80], an index
			parts[i] = k + "=" + s
		}
	}
	return strings.Join(parts, ","), true
}

// plainKey reports whether s prints unquoted in a path: not empty, not all
// digits (which would read as an index), and only letters, digits and
// . _ / - : +.
func plainKey(s string) bool {
	digits := true
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', strings.ContainsRune("._/-:+", r):
			digits = false
		default:
			return false
		}
	}
	return s != "" && !digits
}
