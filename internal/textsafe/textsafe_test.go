package textsafe

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé and 漢字", "plain text, ünïcödé and 漢字"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"hide\x1b[8m this", `hide\x1b[8m this`},
		{"over\rwrite", `over\x0dwrite`},
		{"bell\a nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 csi \u009b8m", `c1 csi \u009b8m`},
		{"bidi \u202eevil\u202c \u2066x\u2069", `bidi \u202eevil\u202c \u2066x\u2069`},
		{"bad utf-8 \xff\x9b", `bad utf-8 \xff\x9b`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Escape(Escape(tc.in)); got != tc.want {
			t.Errorf("Escape is not idempotent on %q: %q", tc.in, got)
		}
	}
}

type key struct{ name string }

func (k key) String() string { return "Namespace " + k.name }

// Arguments are escaped whatever their type and verb, Styled ones are not,
// and %q, widths and numbers print as fmt prints them.
func TestFprintfEscapesArguments(t *testing.T) {
	var b bytes.Buffer
	red := Style(true, "31", "-\x1b[8m")
	_, _ = Fprintf(&b, "%s|%v|%s|%q|%-6s|%d|%s|%v\n", "a\x1bb", errors.New("e\x1b"), key{"n\x1b"}, "q\x1b", "w\x1b", 42, red, []string{"l\x1b"})
	_, _ = Fprintln(&b, "ln\x1b", Raw("\r\x1b[K"))
	_, _ = Fprint(&b, Sprintf("%s%s", "p\x1b", Style(true, "1", "b")))
	want := `a\x1bb|e\x1b|Namespace n\x1b|"q\x1b"|w\x1b |42|` + "\x1b[31m-\\x1b[8m\x1b[0m" + `|[l\x1b]` + "\n" +
		`ln\x1b ` + "\r\x1b[K\n" + `p\x1b` + "\x1b[1mb\x1b[0m"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	if got := string(Style(false, "31", "x\x1b")); got != `x\x1b` {
		t.Errorf("Style off: %q", got)
	}
	if strings.Count(fmt.Sprint(Sprintf("%s", "ok")), "\x1b") != 0 {
		t.Error("Sprintf added escapes")
	}
}

func BenchmarkEscapePlain(b *testing.B) {
	s := strings.Repeat("tenant.team[\"risk\"] Namespace risk ", 4)
	for i := 0; i < b.N; i++ {
		_ = Escape(s)
	}
}
