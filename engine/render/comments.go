package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/gpuform/gpuform/internal/textsafe"
)

// MaxCommentSize is GitHub's limit on the body of an issue or pull
// request comment: 65,536 characters; comments stay under it.
const MaxCommentSize = 65535

// CommentPart is one comment of a Markdown text cut by SplitComments.
type CommentPart struct {
	// Head is the hidden marker "<!-- gpuform:stack=S part=N/M -->" and
	// what reopens the blocks the previous part left open (a <details>, a
	// table's header, a code fence).
	Head string
	// Body is the part's slice of the text: the bodies of all parts
	// concatenated are the text.
	Body string
	// Tail closes what Body leaves open.
	Tail string
}

// String is the comment.
func (c CommentPart) String() string { return c.Head + c.Body + c.Tail }

// CommentMarker is the hidden first line of comment n of m, by which CI
// finds and updates the same comments on every push.
func CommentMarker(stack string, n, m int) string {
	return fmt.Sprintf("<!-- gpuform:stack=%s part=%d/%d -->\n", stack, n, m)
}

// mdState is what is open at a point of a Markdown text.
type mdState struct {
	fence, fenceInfo string   // the open code fence ("```") and its info string
	details          []string // the open <details> lines
	table            string   // the header and delimiter rows of the open table
	prev             string   // the previous line
}

// step advances the state over one line.
func (s *mdState) step(line string) {
	t := strings.TrimRight(line, "\r\n")
	trim := strings.TrimLeft(t, " ")
	indent := len(t) - len(trim)
	defer func() { s.prev = t }()
	if s.fence != "" {
		if indent < 4 && strings.HasPrefix(trim, s.fence) && strings.Trim(trim, "`") == "" {
			s.fence, s.fenceInfo = "", ""
		}
		return
	}
	if indent < 4 && strings.HasPrefix(trim, "```") {
		n := len(trim) - len(strings.TrimLeft(trim, "`"))
		s.fence, s.fenceInfo = trim[:n], strings.TrimSpace(trim[n:])
		s.table = ""
		return
	}
	switch {
	case strings.HasPrefix(trim, "<details"):
		s.details = append(s.details, t)
		s.table = ""
	case trim == "</details>" && len(s.details) > 0:
		s.details = s.details[:len(s.details)-1]
		s.table = ""
	case strings.HasPrefix(trim, "|"):
		if s.table == "" && strings.HasPrefix(s.prev, "|") && isDelimiterRow(trim) {
			s.table = s.prev + "\n" + t + "\n"
		}
	default:
		s.table = ""
	}
}

func isDelimiterRow(s string) bool {
	return strings.Trim(s, "|-: ") == "" && strings.Contains(s, "-")
}

// open reports whether anything is open.
func (s *mdState) open() bool {
	return s.fence != "" || len(s.details) > 0 || s.table != ""
}

// reopen is what a part starts with to continue inside s.
func (s *mdState) reopen() string {
	var b strings.Builder
	for _, d := range s.details {
		b.WriteString(strings.Replace(d, "</summary>", ", continued</summary>", 1) + "\n\n")
	}
	b.WriteString(s.table)
	if s.fence != "" {
		b.WriteString(s.fence + s.fenceInfo + "\n")
	}
	return b.String()
}

// close is what a part ends with to leave s closed; atLineStart says
// whether the body ended with a newline.
func (s *mdState) close(atLineStart bool) string {
	var b strings.Builder
	if !atLineStart {
		b.WriteString("\n")
	}
	if s.fence != "" {
		b.WriteString(s.fence + "\n")
	}
	for range s.details {
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

func (s mdState) clone() mdState {
	s.details = append([]string(nil), s.details...)
	return s
}

// SplitComments cuts a Markdown text into comments of fewer than limit
// bytes (so fewer characters), at line boundaries where it can: every part
// starts with CommentMarker, never ends inside a code block or <details>
// (they are closed and reopened in the next part, and a table's header is
// repeated), and the parts' bodies concatenated are the text.
func SplitComments(text, stack string, limit int) []CommentPart {
	budget := limit - 1 - len(CommentMarker(stack, 999999, 999999))
	var lines []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		// A line too long for any part is cut (at a UTF-8 boundary).
		for max := budget / 4; len(l) > max; {
			cut := max
			for cut > 0 && !utf8Start(l[cut]) {
				cut--
			}
			lines = append(lines, l[:cut])
			l = l[cut:]
		}
		lines = append(lines, l)
	}
	var parts []CommentPart
	var st mdState
	head := ""
	var body strings.Builder
	// clean is the last line of the current part that starts a heading with
	// nothing open: a better place to cut than wherever the budget ends.
	clean, cleanLen := -1, 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		next := st.clone()
		next.step(l)
		atStart := strings.HasSuffix(l, "\n")
		if body.Len() > 0 && len(head)+body.Len()+len(l)+len(next.close(atStart)) > budget {
			b := body.String()
			if clean >= 0 && cleanLen >= budget/2 {
				// Cut before the heading and go on from there.
				parts = append(parts, CommentPart{Head: head, Body: b[:cleanLen]})
				i = clean
				l = lines[i]
				st = mdState{}
				next = st.clone()
				next.step(l)
			} else {
				parts = append(parts, CommentPart{Head: head, Body: b, Tail: st.close(strings.HasSuffix(b, "\n"))})
			}
			head = st.reopen()
			body.Reset()
			clean = -1
		}
		if !st.open() && strings.HasPrefix(l, "#") && body.Len() > 0 {
			clean, cleanLen = i, body.Len()
		}
		body.WriteString(l)
		st = next
	}
	b := body.String()
	parts = append(parts, CommentPart{Head: head, Body: b, Tail: st.close(b == "" || strings.HasSuffix(b, "\n"))})
	for i := range parts {
		parts[i].Head = CommentMarker(stack, i+1, len(parts)) + parts[i].Head
	}
	return parts
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// WriteComments writes comments to w, each after a line
// "<!-- gpuform comment N/M -->" and a blank line between them.
func WriteComments(w io.Writer, parts []CommentPart) error {
	bw := bufio.NewWriter(w)
	for i, part := range parts {
		if i > 0 {
			bw.WriteString("\n")
		}
		textsafe.Fprintf(bw, "<!-- gpuform comment %d/%d -->\n", i+1, len(parts))
		bw.WriteString(part.String())
	}
	return bw.Flush()
}
