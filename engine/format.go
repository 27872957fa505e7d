package engine

import (
	"encoding/json"
	"fmt"
)

// SensitiveValue is how every output shows a value derived from a sensitive variable.
const SensitiveValue = "(sensitive)"

// FormatValue renders a field value in HCL-ish literal syntax: strings
// quoted, maps and lists as JSON, null for nil.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		b, _ := json.Marshal(x)
		return string(b)
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
	return fmt.Sprint(v)
}
