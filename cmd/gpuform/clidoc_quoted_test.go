package main

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// Quote is a line of a document's fenced code block that runs the command.
type Quote struct {
	// Line is the number (from 1) of the document's line that starts the
	// command (a command continued over lines with a backslash is one Quote).
	Line int
	// Text is the line without the prompt ("$ ").
	Text string
	// Synopsis is set for a usage line ("[--flag]", "A | B"): its flags are
	// checked, it is not parsed as a command line.
	Synopsis bool
}

// Block is a fenced code block of a Markdown document.
type Block struct {
	// Line is the line of the opening fence, End of the closing one; Info
	// what follows the opening fence ("console").
	Line, End int
	Info      string
	// Lines are the block's lines, without the fences.
	Lines []string
	// ticks is the length of the opening fence: a closing one is as long
	// or longer.
	ticks int
}

// Blocks returns the fenced code blocks of md.
func Blocks(md []byte) []Block {
	var out []Block
	var cur *Block
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if ticks, info, ok := fence(line); ok {
			switch {
			case cur == nil:
				cur = &Block{Line: n, Info: info, ticks: ticks}
				continue
			case info == "" && ticks >= cur.ticks:
				cur.End = n
				out = append(out, *cur)
				cur = nil
				continue
			}
		}
		if cur != nil {
			cur.Lines = append(cur.Lines, line)
		}
	}
	return out
}

// Prose is md with the lines of its code blocks, fences included, blank:
// its lines keep their numbers.
func Prose(md []byte) string {
	lines := strings.Split(string(md), "\n")
	for _, b := range Blocks(md) {
		for i := b.Line - 1; i < b.End && i < len(lines); i++ {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// fence reports whether line is a code fence (three backticks or more,
// indented by a list item's spaces at most, an info string without
// backticks) and returns its length and info string.
func fence(line string) (int, string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	if !strings.HasPrefix(trimmed, "```") {
		return 0, "", false
	}
	rest := strings.TrimLeft(trimmed, "`")
	info := strings.TrimSpace(rest)
	if strings.Contains(info, "`") {
		return 0, "", false
	}
	return len(trimmed) - len(rest), info, true
}

var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*\s+`)

// CommandLines returns the lines of md's fenced code blocks that run name
// (see BlockCommands).
func CommandLines(md []byte, name string) []Quote {
	var out []Quote
	for _, b := range Blocks(md) {
		out = append(out, BlockCommands(b, name)...)
	}
	return out
}

// BlockCommands returns the lines of b that run name (also as bin/name,
// after a "$ " prompt or environment assignments; in a console block only
// after the prompt, the other lines being output), a line ending in a
// backslash joined with the next, a usage line with its indented lines of
// flags.
func BlockCommands(b Block, name string) []Quote {
	var out []Quote
	for i, line := range b.Lines {
		if b.Info == "console" && !strings.HasPrefix(line, "$ ") {
			continue
		}
		text, ok := commandText(line, name)
		if !ok {
			continue
		}
		start := b.Line + 1 + i
		for strings.HasSuffix(text, "\\") && i+1 < len(b.Lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(b.Lines[i])
		}
		q := Quote{Line: start, Text: text, Synopsis: isSynopsis(text)}
		for _, next := range b.Lines[i+1:] {
			t := strings.TrimSpace(next)
			if !q.Synopsis || next == t || !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "-") {
				break
			}
			q.Text += " " + t
		}
		out = append(out, q)
	}
	return out
}

// commandText returns line from the command's name on, if it runs name.
func commandText(line, name string) (string, bool) {
	text := strings.TrimPrefix(line, "$ ")
	for {
		loc := envAssign.FindStringIndex(text)
		if loc == nil {
			break
		}
		text = text[loc[1]:]
	}
	text = strings.TrimPrefix(text, "bin/")
	if text != name && !strings.HasPrefix(text, name+" ") {
		return "", false
	}
	return text, true
}

// isSynopsis reports whether a line is a usage line rather than a command.
func isSynopsis(text string) bool {
	return strings.ContainsAny(text, "[") || strings.Contains(text, " | ")
}

var flagName = regexp.MustCompile(`(?:^|[\s\[|(])(--?[a-zA-Z][a-zA-Z0-9-]*)`)

// Check reports what of q root does not know: an unknown command, an
// unknown flag, a missing flag value or a wrong number of arguments. A
// synopsis is checked for its command and its flags' names only.
func Check(root *cobra.Command, q Quote) error {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	if q.Synopsis {
		return checkSynopsis(root, q.Text)
	}
	args, err := Split(q.Text)
	if err != nil {
		return err
	}
	cmd, rest, err := root.Find(args[1:])
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// checkSynopsis checks a usage line's command path and flag names; the
// path is the leading words before the first flag, argument or bracket.
func checkSynopsis(root *cobra.Command, text string) error {
	words := strings.Fields(text)
	cmd := root
	for _, w := range words[1:] {
		next, _, err := cmd.Find([]string{w})
		if err != nil || next == cmd {
			break
		}
		cmd = next
	}
	if len(words) > 1 && cmd == root && !strings.HasPrefix(words[1], "-") && !strings.HasPrefix(words[1], "[") {
		return fmt.Errorf("unknown command %q for %q", words[1], root.Name())
	}
	// A description after two spaces may name other commands' flags.
	if i := strings.Index(text, "   "); i > 0 {
		text = text[:i]
	}
	for _, m := range flagName.FindAllStringSubmatch(text, -1) {
		name := m[1]
		var ok bool
		if strings.HasPrefix(name, "--") {
			ok = cmd.Flags().Lookup(name[2:]) != nil || cmd.InheritedFlags().Lookup(name[2:]) != nil
		} else if len(name) == 2 { // pflag panics on a longer shorthand
			ok = cmd.Flags().ShorthandLookup(name[1:]) != nil || cmd.InheritedFlags().ShorthandLookup(name[1:]) != nil
		}
		if !ok {
			return fmt.Errorf("%s: unknown flag %s", cmd.CommandPath(), name)
		}
	}
	return nil
}

// Split splits a command line into words as a POSIX shell would for the
// simple lines documents quote: single and double quotes, backslash
// escapes; the command ends at an unquoted #, ;, |, &, < or >.
func Split(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				cur.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, fmt.Errorf("unterminated \" in %q", line)
			}
			i = j
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte("#;|&<>", c) >= 0 && (c != '#' || !inWord):
			i = len(line)
		case c == '2' && !inWord && i+1 < len(line) && line[i+1] == '>':
			i = len(line)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
