package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gpuform/gpuform/config"
)

// TestDiagnosticStyle reads every diagnostic the bad configurations of
// testdata/config/invalid produce (their expected.json, which
// TestInvalidConfigs keeps equal to what validate prints) and checks the
// Terraform convention docs/language.md states: the summary starts upper
// case, the detail is a sentence, starting upper case or with a name (an
// argument, address or variable, spelled as in the configuration) and
// ending with a full stop. internal/arch TestDiagnosticSummariesStartUpperCase
// checks the summaries the source spells out, beyond this corpus.
func TestDiagnosticStyle(t *testing.T) {
	names := map[string]bool{}
	var walk func([]config.BlockSchema)
	walk = func(bs []config.BlockSchema) {
		for _, b := range bs {
			names[b.Type] = true
			for _, a := range b.Attrs {
				names[a.Name] = true
			}
			walk(b.Blocks)
		}
	}
	walk(config.Schema())
	seen := 0
	for _, name := range invalidCases(t) {
		src, err := os.ReadFile(filepath.Join(invalidDir, name, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		var out config.JSONDiagnostics
		if err := json.Unmarshal(src, &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, d := range out.Diagnostics {
			seen++
			if problem := diagnosticStyle(d.Summary, d.Detail, names); problem != "" {
				t.Errorf("%s: %q / %q: %s", name, d.Summary, d.Detail, problem)
			}
		}
	}
	if seen < 50 {
		t.Errorf("read %d diagnostics; want the corpus's", seen)
	}
}

// diagnosticStyle says what is wrong with a diagnostic's wording, or "".
func diagnosticStyle(summary, detail string, names map[string]bool) string {
	if r, _ := utf8.DecodeRuneInString(summary); !unicode.IsUpper(r) {
		return "the summary does not start upper case"
	}
	if strings.HasSuffix(summary, ".") {
		return "the summary ends with a full stop; it is a title"
	}
	if detail == "" {
		return ""
	}
	first := strings.TrimSpace(detail)
	if r, _ := utf8.DecodeRuneInString(first); unicode.IsLower(r) {
		word := first
		if i := strings.IndexAny(word, " ,:;("); i >= 0 {
			word = word[:i]
		}
		if !strings.ContainsAny(word, "._[") && !names[word] {
			return "the detail starts with the lower-case word " + strconvQuote(word) + ", neither a name nor upper case"
		}
	}
	// The first paragraph is the sentence; what follows may be a quoted
	// configuration or a list.
	para, _, _ := strings.Cut(strings.TrimSpace(detail), "\n\n")
	if !strings.HasSuffix(para, ".") && !strings.HasSuffix(para, ".)") && !strings.HasSuffix(para, ":") && !strings.HasSuffix(para, "?") {
		return "the detail's first paragraph does not end with a full stop"
	}
	return ""
}

func strconvQuote(s string) string { return `"` + s + `"` }
