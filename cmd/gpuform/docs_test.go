package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot is the repository's root, seen from this package.
var repoRoot = filepath.Join("..", "..")

// cliDoc is the generated command-line reference.
var cliDoc = filepath.Join(repoRoot, "docs", "cli.md")

// docFiles returns README.md and docs/*.md, by path relative to the root.
func docFiles(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range append(names, filepath.Join(repoRoot, "README.md")) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, name)
		out[filepath.ToSlash(rel)] = src
	}
	if len(out) < 10 {
		t.Fatalf("found %d documents", len(out))
	}
	return out
}

// docsRoot is the command tree the documents are checked against, with the
// help and completion commands cobra adds when it runs.
func docsRoot() *cobra.Command {
	root := newRootCommand(nil, io.Discard, io.Discard, nil)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// docs/cli.md and README.md's table of commands are generated from the
// commands' own help (make docs, which runs this test with -update); it
// fails when a command, a flag, a default or a help text changed and they
// were not regenerated.
func TestCLIReference(t *testing.T) {
	got := Reference(docsRoot(), "make docs")
	if *update {
		if err := os.WriteFile(cliDoc, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatalf("%v: run make docs", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/cli.md is out of date with the commands' help: run make docs\n%s", firstDifference(string(want), string(got)))
	}
	readme := filepath.Join(repoRoot, "README.md")
	src, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	spliced, err := Splice(src, "commands", Summary(docsRoot(), "docs/cli.md"))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if *update {
		if err := os.WriteFile(readme, spliced, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if !bytes.Equal(spliced, src) {
		t.Errorf("README.md's table of commands is out of date with the commands' help: run make docs\n%s", firstDifference(string(src), string(spliced)))
	}
	for _, w := range []string{"## gpuform apply", "| `--parallelism int` | `16` |", "## Global flags", "| `--chdir DIR` |"} {
		if !bytes.Contains(got, []byte(w)) {
			t.Errorf("the reference lacks %q", w)
		}
	}
}

// firstDifference shows the first line where two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  file:   " + a + "\n  binary: " + b
		}
	}
	return ""
}

// Every gpuform command line the documents quote in a code block (plain,
// sh, console after "$ "; text blocks hold output and help) names a real command with real
// flags and a number of arguments it accepts; a usage line names real flags.
func TestDocsCommandLines(t *testing.T) {
	checked := 0
	for name, src := range docFiles(t) {
		for _, b := range Blocks(src) {
			for i, l := range b.Lines {
				if strings.HasPrefix(l, "global:") {
					t.Errorf("%s:%d: lists the global flags by hand; link to cli.md#global-flags, which make docs keeps true", name, b.Line+1+i)
				}
			}
		}
		for _, q := range append(docCommandLines(src), inlineCommands(src)...) {
			checked++
			if err := Check(docsRoot(), q); err != nil {
				t.Errorf("%s:%d: %s\n  %v", name, q.Line, q.Text, err)
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked only %d command lines", checked)
	}
}

// shellBlock are the code blocks that hold command lines: in a console
// block, those after a "$ " prompt (the other lines are output).
var shellBlock = map[string]bool{"": true, "sh": true, "shell": true, "bash": true, "console": true}

// docCommandLines are the gpuform command lines of src's code blocks that
// hold commands.
func docCommandLines(src []byte) []Quote {
	var out []Quote
	for _, b := range Blocks(src) {
		if shellBlock[b.Info] {
			out = append(out, BlockCommands(b, "gpuform")...)
		}
	}
	return out
}

// inlineCommands are the code spans of src's prose that quote a gpuform
// command ("gpuform plan --base REF"), to be checked as usage lines: the
// command and the flags' names. A span whose second word is no command
// ("gpuform stopped: ...") quotes output.
func inlineCommands(src []byte) []Quote {
	root := docsRoot()
	var out []Quote
	for i, l := range strings.Split(Prose(src), "\n") {
		for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
			words := strings.Fields(m[1])
			if len(words) < 2 || words[0] != "gpuform" {
				continue
			}
			if c, _, err := root.Find(words[1:2]); err == nil && c != root || strings.HasPrefix(words[1], "-") {
				out = append(out, Quote{Line: i + 1, Text: m[1], Synopsis: true})
			}
		}
	}
	return out
}

// inlineCode is a Markdown code span.
var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// quotedMessages returns what a document quotes as the binary's output by
// this convention: lines of code blocks and code spans that start with
// "Error: " or "Warning: ", and code spans in a table's "message" column.
func quotedMessages(src []byte) []string {
	var out []string
	isMsg := func(s string) bool { return strings.HasPrefix(s, "Error: ") || strings.HasPrefix(s, "Warning: ") }
	for _, b := range Blocks(src) {
		for _, l := range b.Lines {
			if l = strings.TrimSpace(l); isMsg(l) {
				out = append(out, l)
			}
		}
	}
	for _, m := range inlineCode.FindAllStringSubmatch(string(src), -1) {
		if isMsg(m[1]) {
			out = append(out, m[1])
		}
	}
	return append(out, messageColumns(src)...)
}

// messageColumns returns the code spans of the cells of tables' "message"
// columns (a header cell that starts with "message").
func messageColumns(src []byte) []string {
	var out []string
	col := -1
	for _, l := range strings.Split(Prose(src), "\n") {
		if !strings.HasPrefix(l, "|") {
			col = -1
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if col < 0 {
			col = -2 // a table whose header has no message column
			for i, c := range cells {
				if strings.HasPrefix(strings.TrimSpace(c), "message") {
					col = i
				}
			}
			continue
		}
		if col >= 0 && col < len(cells) {
			for _, m := range inlineCode.FindAllStringSubmatch(cells[col], -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// Every message a document quotes as output ("Error: ...", "Warning: ...")
// is one the binary can print: each stretch of words of it is in a string
// literal of the source (values, quoted names and "..." aside).
func TestDocsQuotedMessages(t *testing.T) {
	chunks, err := Chunks(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	// Errors of Go's standard library that gpuform passes on.
	chunks = append(chunks, "connection reset by peer", "connection refused", "no such file or directory")
	checked := 0
	for name, src := range docFiles(t) {
		for _, msg := range quotedMessages(src) {
			checked++
			if bad := Uncovered(msg, chunks); len(bad) > 0 {
				t.Errorf("%s quotes a message gpuform does not print:\n  %s\n  not printed: %q", name, msg, bad)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d quoted messages", checked)
	}
	if bad := Uncovered("Error: the plan file was changed after it was made; run plan again", chunks); len(bad) == 0 {
		t.Error("a message gpuform no longer prints passes the check")
	}
}

// mdLink is a Markdown link or image target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// bareURL is a web address in prose.
var bareURL = regexp.MustCompile(`https?://[^\s)>]+`)

// The documents stand alone: every link leads to a file of the repository
// (and a heading of it that exists), no document cites DESIGN.md or a web
// page; addresses appear only inside code, as output.
func TestDocsCiteOnlyTheRepository(t *testing.T) {
	docs := docFiles(t)
	anchors := map[string]map[string]bool{}
	for name, src := range docs {
		anchors[name] = headingAnchors(src)
	}
	links := 0
	for name, src := range docs {
		if bytes.Contains(src, []byte("DESIGN.md")) {
			t.Errorf("%s cites DESIGN.md, which is not in the repository", name)
		}
		prose := proseOf(src)
		for _, u := range bareURL.FindAllString(prose, -1) {
			t.Errorf("%s cites %s, outside the repository", name, u)
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			links++
			target, frag, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s links to %s, outside the repository", name, m[1])
				continue
			}
			doc := name
			if target != "" {
				doc = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), target)))
				if strings.HasPrefix(doc, "../") {
					t.Errorf("%s links to %s, outside the repository", name, m[1])
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, doc)); err != nil {
					t.Errorf("%s links to %s, which does not exist", name, m[1])
					continue
				}
			}
			if frag != "" && anchors[doc] != nil && !anchors[doc][frag] {
				t.Errorf("%s links to %s: %s has no such heading", name, m[1], doc)
			}
		}
	}
	if links < 20 {
		t.Errorf("checked only %d links", links)
	}
}

// proseOf is src without its code blocks and code spans.
func proseOf(src []byte) string {
	return inlineCode.ReplaceAllString(Prose(src), "code")
}

// headingAnchors are the anchors of src's headings, as GitHub makes them
// (a repeated heading gets -1, -2, ...).
func headingAnchors(src []byte) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, l := range strings.Split(Prose(src), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		a := Anchor(strings.TrimSpace(strings.TrimLeft(l, "#")))
		if n := count[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out
}

// flagInCell is a flag name in a table cell's code span.
var flagInCell = regexp.MustCompile("`(--?[a-z][a-z0-9-]*)")

// The documents' flag tables ("| flag | default | meaning |", under the
// usage line of their command) name flags the command has, with the
// defaults it has: "off" for a switch, "none" for an empty default, else
// the value (a duration in any spelling), or the "(default X)" its help
// states for a default it works out.
func TestDocsFlagTables(t *testing.T) {
	checked := 0
	for name, src := range docFiles(t) {
		if name == "docs/cli.md" {
			continue
		}
		root := docsRoot()
		// A table's command is the first of the code block before it.
		blockCmd := map[int]*cobra.Command{} // by the line of the block's end
		for _, b := range Blocks(src) {
			for _, l := range b.Lines {
				if q, ok := strings.CutPrefix(strings.TrimPrefix(l, "$ "), "gpuform "); ok {
					if c, _, err := root.Find(strings.Fields(strings.Split(q, "[")[0])); err == nil {
						blockCmd[b.End] = c
					}
					break
				}
			}
		}
		var cmd *cobra.Command
		header := false
		for i, l := range strings.Split(Prose(src), "\n") {
			if c, ok := blockCmd[i+1]; ok {
				cmd = c
			}
			if strings.HasPrefix(l, "| flag | default |") {
				header = true
				continue
			}
			if !header || !strings.HasPrefix(l, "|") {
				header = false
				continue
			}
			cells := strings.Split(strings.Trim(l, "|"), " | ")
			flags := flagInCell.FindAllStringSubmatch(cells[0], -1)
			if cmd == nil || len(flags) == 0 || len(cells) < 2 {
				continue
			}
			for _, f := range flags {
				checked++
				fl := lookupFlag(cmd, f[1])
				if fl == nil {
					t.Errorf("%s:%d: %s has no flag %s", name, i+1, cmd.CommandPath(), f[1])
					continue
				}
				if len(flags) == 1 && !sameDefault(strings.TrimSpace(cells[1]), fl.DefValue) && !strings.Contains(fl.Usage, "(default "+strings.Trim(strings.TrimSpace(cells[1]), "`")+")") {
					t.Errorf("%s:%d: %s %s: the table says the default is %s, the command's is %q", name, i+1, cmd.CommandPath(), f[1], cells[1], fl.DefValue)
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked only %d flags of tables", checked)
	}
	if !sameDefault("`15m`", "15m0s") || !sameDefault("off", "false") || sameDefault("10", "16") {
		t.Error("sameDefault compares wrongly")
	}
}

// lookupFlag finds a flag (--name or -x) of cmd, its own or inherited.
func lookupFlag(cmd *cobra.Command, flag string) *pflag.Flag {
	if name, ok := strings.CutPrefix(flag, "--"); ok {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	if len(flag) != 2 { // -x only; pflag panics on a longer shorthand
		return nil
	}
	if f := cmd.Flags().ShorthandLookup(flag[1:]); f != nil {
		return f
	}
	return cmd.InheritedFlags().ShorthandLookup(flag[1:])
}

// leadingValue is a default cell's value: a code span or a number at its
// start.
var leadingValue = regexp.MustCompile("^(?:`([^`]*)`|([0-9]+)\\b)")

// sameDefault reports whether a table's default cell agrees with a flag's
// default; a cell in words ("as apply", "$NODE_NAME") is not compared.
func sameDefault(cell, def string) bool {
	switch cell {
	case "off":
		return def == "false"
	case "none":
		return def == "" || def == "[]" || def == "0s"
	}
	m := leadingValue.FindStringSubmatch(cell)
	if m == nil || strings.HasPrefix(m[1], "$") {
		return true
	}
	v := m[1] + m[2]
	if v == def {
		return true
	}
	a, errA := time.ParseDuration(v)
	b, errB := time.ParseDuration(def)
	return errA == nil && errB == nil && a == b
}
