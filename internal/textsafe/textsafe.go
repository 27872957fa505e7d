// Package textsafe makes text that gpuform did not write itself safe to
// print on a terminal. A description, a label value, a live object's field
// manager, a node name, a lease holder, a plan file or an API server's error
// may carry control characters: an ESC sequence such as ESC[8m hides the
// lines after it in a CI log (including "will be destroyed"), a carriage
// return overwrites a line, a bidirectional override reorders it. Escape
// shows them as visible escapes instead; Fprintf and its siblings escape
// every argument they format and leave alone only Styled text, which
// gpuform styles itself (its colours).
package textsafe

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// Escape returns s with every character that a terminal would act on shown
// as a Go-style escape: C0 controls but newline and tab (ESC is \x1b, a
// carriage return \x0d), DEL, C1 controls (\u009b), bidirectional
// formatting characters (\u202e) and bytes that are not UTF-8 (\xff).
// Text without such characters is returned as it is.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the byte index of the first character Escape changes, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports whether a terminal acts on r: a control character other
// than newline and tab, or a bidirectional formatting character.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// Styled is text gpuform wrote itself, with its own escape sequences (the
// colours of Style): the printing functions below write it as it is. Build
// it only with Style and Sprintf, never by converting text from outside.
type Styled string

// Style is s in the SGR style code ("1" bold, "31" red, "1;32" bold green)
// when on, else s alone; s is escaped either way.
func Style(on bool, code string, s any) Styled {
	text := escapeArg(s)
	if !on {
		return Styled(text)
	}
	return Styled("\x1b[" + code + "m" + text + "\x1b[0m")
}

// Raw is a control sequence gpuform emits itself, such as the carriage
// return and erase-line of a progress line; seq must be a constant.
func Raw(seq string) Styled { return Styled(seq) }

// Sprintf is fmt.Sprintf with every argument but Styled ones escaped; the
// result is Styled, to be printed or styled further as it is.
func Sprintf(format string, args ...any) Styled {
	return Styled(fmt.Sprintf(format, safeArgs(args)...))
}

// Fprintf is fmt.Fprintf with every argument but Styled ones escaped.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, safeArgs(args)...)
}

// Fprintln is fmt.Fprintln with every argument but Styled ones escaped.
func Fprintln(w io.Writer, args ...any) (int, error) {
	return fmt.Fprintln(w, safeArgs(args)...)
}

// Fprint is fmt.Fprint with every argument but Styled ones escaped.
func Fprint(w io.Writer, args ...any) (int, error) {
	return fmt.Fprint(w, safeArgs(args)...)
}

// safeArgs wraps every argument but Styled text in an escaping formatter.
func safeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case Styled:
			out[i] = string(x)
		case string:
			out[i] = a
			if firstUnsafe(x) >= 0 {
				out[i] = escaped{a}
			}
		case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			out[i] = a
		default:
			out[i] = escaped{a}
		}
	}
	return out
}

// escaped formats its value as fmt would, then escapes the result.
type escaped struct{ v any }

// Format implements fmt.Formatter. %s and %v escape the text before any
// padding, so a column of escaped text lines up.
func (e escaped) Format(f fmt.State, verb rune) {
	if (verb == 's' || verb == 'v') && !f.Flag('#') && !f.Flag('+') {
		s, ok := e.v.(string)
		if !ok {
			s = fmt.Sprint(e.v)
		}
		if plain(f) {
			_, _ = io.WriteString(f, Escape(s))
			return
		}
		_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), Escape(s))
		return
	}
	_, _ = io.WriteString(f, Escape(fmt.Sprintf(fmt.FormatString(f, verb), e.v)))
}

// plain reports whether a verb has no width, precision or flags.
func plain(f fmt.State) bool {
	_, w := f.Width()
	_, p := f.Precision()
	return !w && !p && !f.Flag('-') && !f.Flag('+') && !f.Flag('#') && !f.Flag(' ') && !f.Flag('0')
}

// escapeArg is how Style shows an argument.
func escapeArg(a any) string {
	switch x := a.(type) {
	case Styled:
		return string(x)
	case string:
		return Escape(x)
	}
	return Escape(fmt.Sprint(a))
}

// IsTerminal reports whether w is a terminal (an *os.File on one): where
// colours and live progress lines may be written.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
