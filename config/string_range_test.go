package config

import (
	"strings"
	"testing"
)

// StringRange maps a byte range of an alert's expr value back to the
// characters of the source that gave it: through escapes, $${ and heredoc
// lines, and to the whole argument when the string is not a literal.
func TestStringRange(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		// find is the text of the value to locate; want the source text
		// the range covers and its line and column.
		find, want string
		line, col  int
	}{
		{"plain", `"up == 0"`, "==", "==", 1, 14},
		{"after escapes", `"up{job=\"a\"} == 0"`, "==", "==", 1, 25},
		{"escaped quote itself", `"up{job=\"a\"}"`, `"a"`, `\"a\"`, 1, 18},
		{"after a unicode escape", `"x{l=\"\u00e9\"} + y"`, "+", "+", 1, 27},
		{"after a literal ${", `"x{l=\"$${a}\"} + y"`, "+", "+", 1, 26},
		{"heredoc", "<<EOT\nsum(x)\n  by (y) z\nEOT\n", "z", "z", 3, 10},
		{"interpolation: the whole argument", `"x > ${local.n}"`, ">", `"x > ${local.n}"`, 1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "gpuform {\n  stack = \"s\"\n}\nlocals {\n  n = 1\n}\nalert \"a\" {\n  expr = " + tc.expr + "\n}\n"
			cfg, diags := LoadSources(map[string][]byte{"main.hcl": []byte(src)}, Options{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			a := cfg.Alerts[0]
			i := strings.Index(a.Expr, tc.find)
			if i < 0 {
				t.Fatalf("%q not in %q", tc.find, a.Expr)
			}
			rng := cfg.StringRange(a.Range("expr"), i, i+len(tc.find))
			if got := string(rng.SliceBytes([]byte(src))); got != tc.want {
				t.Errorf("range covers %q; want %q", got, tc.want)
			}
			line := tc.line + 7 // the alert's expr is on line 8
			if rng.Start.Line != line || rng.Start.Column != tc.col {
				t.Errorf("range starts at %d:%d; want %d:%d", rng.Start.Line, rng.Start.Column, line, tc.col)
			}
		})
	}
}
