package render

// MarkdownText makes s, which may hold names from the configuration or the
// cluster, plain text in Markdown (a table cell, a sentence): the
// escaping the Markdown plan uses, for a command that lays out several
// plans (a fleet's).
func MarkdownText(s string) string { return mdEscape(s) }

// MarkdownCode writes s as a Markdown code span, safe in a table cell and
// in text, fenced as the Markdown plan fences names.
func MarkdownCode(s string) string { return mdCode(s) }
