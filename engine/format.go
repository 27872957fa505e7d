package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SensitiveValue is how every output shows a value derived from a sensitive variable.
const SensitiveValue = "(sensitive)"

// FormatValue renders a field value in HCL-ish literal syntax: strings
// quoted, maps and lists as JSON, null for nil. Characters JSON may escape
// for HTML (<, >, &) stay as they are: PromQL reads "x > 90", not
// "x \u003e 90".
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string, map[string]any, []any:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return fmt.Sprint(x)
		}
		return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	return fmt.Sprint(v)
}
