package render

import (
	"strings"
)

// mdTextEscaper escapes text for GitHub-flavoured Markdown outside code:
// HTML (a tag, an entity) and every character that opens Markdown
// structure inside a line (emphasis, code, links and images, table cells,
// strike-through, headings in list items) is shown as itself. Line breaks
// are shown as \n: a raw one would end a table row or a list item (other
// control characters are textsafe's).
var mdTextEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "|", `\|`, "~", `\~`, "#", `\#`,
	// A link or an image needs "](" or "][" ("[x]" alone links nowhere:
	// the comment defines no references); "[" alone stays, as in the
	// \x1b[ that textsafe shows for an escape character.
	"](", `\](`, "][", `\][`, "![", `!\[`,
	"\r\n", `\n`, "\n", `\n`,
)

// mdEscape makes s, which may hold names from the configuration or the
// cluster (a tenant's for_each key, an object's name, a value), plain text
// in Markdown: a table cell, a list item, a sentence.
func mdEscape(s string) string { return mdTextEscaper.Replace(s) }

// mdCode writes s as a Markdown code span in a table cell or text: fenced
// by one backtick more than the longest run of backticks in s (padded with
// spaces when s starts or ends with one), with | as \| (GitHub splits a
// table row at every unescaped | before it reads code spans, and shows \|
// in a code span as |) and line breaks shown as \n.
func mdCode(s string) string {
	s = strings.NewReplacer("|", `\|`, "\r\n", `\n`, "\n", `\n`).Replace(s)
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// fenceSafe keeps text inside a ``` code block from closing it: no run of
// three backticks is left (as drift's Markdown does).
func fenceSafe(s string) string { return strings.ReplaceAll(s, "```", "` ` `") }
