package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// languageDoc is the language reference the schema is checked against.
const languageDoc = "../docs/language.md"

// TestLanguageDocCoversSchema fails when docs/language.md does not mention a
// block type, an argument or a nested block of Schema(). A block type is
// documented by a heading whose first code span is the type ("## `tenant`");
// an argument counts as mentioned when it appears in backticks within its
// block's section. Nested blocks are looked up as sub-headings of the parent's
// section and fall back to the parent's section; repeatable blocks must also
// mention the for_each and count meta-arguments.
func TestLanguageDocCoversSchema(t *testing.T) {
	src, err := os.ReadFile(languageDoc)
	if err != nil {
		t.Fatalf("read the language reference: %v", err)
	}
	if missing := missingFromDoc(string(src)); len(missing) > 0 {
		t.Errorf("%s does not document %d schema items:\n  %s", languageDoc, len(missing), strings.Join(missing, "\n  "))
	}
}

// TestLanguageDocCheckCatchesOmissions makes sure the check above is not
// vacuous: removing every backticked mention of an argument from the real
// document, or a block's heading, must be reported.
func TestLanguageDocCheckCatchesOmissions(t *testing.T) {
	src, err := os.ReadFile(languageDoc)
	if err != nil {
		t.Fatalf("read the language reference: %v", err)
	}
	doc := string(src)
	for _, tc := range []struct {
		old, new, want string
	}{
		{"`cohort`", "cohort", "block `tenant`: argument `cohort`"},
		{"`borrowing_limit`", "borrowing_limit", "block `tenant.quota`: argument `borrowing_limit`"},
		{"`enabled`", "enabled", "block `mig_layout.device`: argument `enabled`"},
		{"`error_message`", "error_message", "block `variable.validation`: argument `error_message`"},
		{"`for_each`", "for_each", "block `model`: argument `for_each`"},
		{"## `cluster`", "## Cluster", "block `cluster`: no section"},
	} {
		if !strings.Contains(doc, tc.old) {
			t.Fatalf("%s does not contain %s; update this test", languageDoc, tc.old)
		}
		missing := missingFromDoc(strings.ReplaceAll(doc, tc.old, tc.new))
		if !containsString(missing, tc.want) {
			t.Errorf("with %s replaced by %s, the check reported %q; want it to report %q", tc.old, tc.new, missing, tc.want)
		}
	}
}

// missingFromDoc lists the schema items doc does not document.
func missingFromDoc(doc string) []string {
	secs := docSections(doc)
	var missing []string
	for _, b := range Schema() {
		sec, ok := findSection(secs, 0, len(secs), b.Type)
		if !ok {
			missing = append(missing, fmt.Sprintf("block `%s`: no section (a heading like \"## `%s`\")", b.Type, b.Type))
			continue
		}
		missing = append(missing, missingAttrs(b.Type, &b, secs, sec)...)
		for _, nb := range b.Blocks {
			path := b.Type + "." + nb.Type
			text := secs[sec].text(secs, sec)
			sub, ok := findSection(secs, sec+1, secs[sec].end(secs, sec), nb.Type)
			if ok {
				missing = append(missing, missingAttrs(path, &nb, secs, sub)...)
				continue
			}
			if !strings.Contains(text, "`"+nb.Type+"`") {
				missing = append(missing, fmt.Sprintf("block `%s`: nested block `%s` not mentioned in the `%s` section", path, nb.Type, b.Type))
			}
			missing = append(missing, missingIn(path, &nb, text)...)
		}
	}
	return missing
}

// missingAttrs lists the arguments of b not mentioned in section sec.
func missingAttrs(path string, b *BlockSchema, secs []docSection, sec int) []string {
	return missingIn(path, b, secs[sec].text(secs, sec))
}

func missingIn(path string, b *BlockSchema, text string) []string {
	var names []string
	for _, a := range b.Attrs {
		names = append(names, a.Name)
	}
	if b.Repeatable {
		names = append(names, metaArgs...)
	}
	var missing []string
	for _, n := range names {
		if !strings.Contains(text, "`"+n+"`") {
			missing = append(missing, fmt.Sprintf("block `%s`: argument `%s` not mentioned (in backticks) in its section", path, n))
		}
	}
	return missing
}

// docSection is one heading of the document and the lines under it.
type docSection struct {
	level int    // number of '#'
	title string // heading text
	body  string // text up to the next heading of any level
}

// end returns the index after the last subsection of secs[i].
func (s docSection) end(secs []docSection, i int) int {
	j := i + 1
	for j < len(secs) && secs[j].level > s.level {
		j++
	}
	return j
}

// text is the section's body with all its subsections.
func (s docSection) text(secs []docSection, i int) string {
	var b strings.Builder
	b.WriteString(s.body)
	for j := i + 1; j < s.end(secs, i); j++ {
		b.WriteString(secs[j].title)
		b.WriteString("\n")
		b.WriteString(secs[j].body)
	}
	return b.String()
}

// docSections splits a Markdown document at its ATX headings, ignoring lines
// inside fenced code blocks (HCL comments start with '#').
func docSections(doc string) []docSection {
	var secs []docSection
	var body strings.Builder
	flush := func() {
		if len(secs) > 0 {
			secs[len(secs)-1].body = body.String()
		}
		body.Reset()
	}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			level := len(line) - len(strings.TrimLeft(line, "#"))
			if level <= 6 && (len(line) == level || line[level] == ' ') {
				flush()
				secs = append(secs, docSection{level: level, title: strings.TrimSpace(line[level:])})
				continue
			}
		}
		body.WriteString(line)
		body.WriteString("\n")
	}
	flush()
	return secs
}

// findSection returns the first section in secs[from:to] whose heading's
// first code span is typ.
func findSection(secs []docSection, from, to int, typ string) (int, bool) {
	for i := from; i < to; i++ {
		if firstCodeSpan(secs[i].title) == typ {
			return i, true
		}
	}
	return 0, false
}

// firstCodeSpan returns the text of the first `code span` in s, or "".
func firstCodeSpan(s string) string {
	_, rest, ok := strings.Cut(s, "`")
	if !ok {
		return ""
	}
	span, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return span
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, s) {
			return true
		}
	}
	return false
}
