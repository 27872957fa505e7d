package engine

import "testing"

// FormatValue writes PromQL's comparisons as they are, not as JSON's HTML
// escapes (\u003e), in strings, maps and lists.
func TestFormatValueKeepsComparisons(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"x > 90 & y < 1", `"x > 90 & y < 1"`},
		{map[string]any{"expr": "a > b"}, `{"expr":"a > b"}`},
		{[]any{"a < b", int64(2)}, `["a < b",2]`},
		{nil, "null"},
		{int64(3), "3"},
	} {
		if got := FormatValue(tc.in); got != tc.want {
			t.Errorf("FormatValue(%#v) = %s; want %s", tc.in, got, tc.want)
		}
	}
}
