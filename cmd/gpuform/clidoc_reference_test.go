package main

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Reference renders the Markdown reference of root's command tree: for each
// visible command its usage line, short and long help and its flags with
// their defaults, and root's persistent flags once as the global flags.
// generator names the command that regenerates the file.
func Reference(root *cobra.Command, generator string) []byte {
	var b bytes.Buffer
	name := root.Name()
	fmt.Fprintf(&b, "# `%s` command-line reference\n\n", name)
	fmt.Fprintf(&b, "Generated from the commands' own help by `%s`; a test fails when this file and the\n", generator)
	fmt.Fprintf(&b, "binary disagree. Do not edit it by hand: change the command's help and regenerate.\n\n")
	cmds := visible(root)
	for _, c := range cmds {
		fmt.Fprintf(&b, "- [`%s`](#%s)\n", c.CommandPath(), Anchor(c.CommandPath()))
	}
	fmt.Fprintf(&b, "- [Global flags](#global-flags)\n\n")
	for _, c := range cmds {
		command(&b, c)
	}
	fmt.Fprintf(&b, "## Global flags\n\nEvery command takes these.\n\n")
	flagTable(&b, root.PersistentFlags())
	return b.Bytes()
}

// visible lists the commands below root, depth first in name order,
// without hidden ones and cobra's help command.
func visible(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	subs := append([]*cobra.Command(nil), root.Commands()...)
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	for _, c := range subs {
		if c.Hidden || c.Name() == "help" || c.Deprecated != "" {
			continue
		}
		out = append(out, c)
		out = append(out, visible(c)...)
	}
	return out
}

// command writes one command's section.
func command(b *bytes.Buffer, c *cobra.Command) {
	fmt.Fprintf(b, "## %s\n\n", c.CommandPath())
	fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(c.Short, "."))
	use := c.UseLine()
	if c.Runnable() && c.HasAvailableLocalFlags() && !strings.Contains(use, "[flags]") {
		use += " [flags]"
	}
	fmt.Fprintf(b, "```\n%s\n```\n\n", use)
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", long)
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "Aliases: `%s`.\n\n", strings.Join(c.Aliases, "`, `"))
	}
	if ex := strings.TrimSpace(c.Example); ex != "" {
		fmt.Fprintf(b, "Examples:\n\n```\n%s\n```\n\n", ex)
	}
	if fs := c.LocalNonPersistentFlags(); fs.HasAvailableFlags() {
		flagTable(b, fs)
	}
	var subs []string
	for _, s := range c.Commands() {
		if !s.Hidden && s.Name() != "help" {
			subs = append(subs, fmt.Sprintf("[`%s`](#%s)", s.CommandPath(), Anchor(s.CommandPath())))
		}
	}
	if len(subs) > 0 {
		sort.Strings(subs)
		fmt.Fprintf(b, "Subcommands: %s.\n\n", strings.Join(subs, ", "))
	}
}

// flagTable writes a flag set as a table: flag, default, meaning.
func flagTable(b *bytes.Buffer, fs *pflag.FlagSet) {
	fmt.Fprintf(b, "| flag | default | meaning |\n|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		if varname != "" {
			name += " " + varname
		}
		def := ""
		if !zeroDefault(f) {
			def = "`" + f.DefValue + "`"
		}
		if f.Deprecated != "" {
			usage += " (deprecated: " + f.Deprecated + ")"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, def, cell(usage))
	})
	b.WriteString("\n")
}

// zeroDefault reports whether f's default is its type's zero value, which
// the table leaves blank.
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "false", "[]":
		return true
	}
	return false
}

// address is a web address in help text: an example (a Prometheus URL),
// shown as code.
var address = regexp.MustCompile("https?://[^\\s,;)]+")

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = address.ReplaceAllString(s, "`$0`")
	return strings.ReplaceAll(s, "\n", " ")
}

// Anchor is the heading anchor GitHub derives from a heading's text.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Summary renders a Markdown table of root's visible commands (not their
// subcommands): usage and short help, each linked to its section of the
// reference at ref (a path relative to the document the table goes in).
func Summary(root *cobra.Command, ref string) []byte {
	var b bytes.Buffer
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range visible(root) {
		if c.Parent() != root {
			continue
		}
		fmt.Fprintf(&b, "| [`%s`](%s#%s) | %s |\n", cell(c.UseLine()), ref, Anchor(c.CommandPath()), cell(strings.TrimSuffix(c.Short, ".")))
	}
	return b.Bytes()
}

// Splice replaces what doc holds between the lines "<!-- name: ..." and
// "<!-- /name -->" with content.
func Splice(doc []byte, name string, content []byte) ([]byte, error) {
	begin := []byte("<!-- " + name + ":")
	end := []byte("<!-- /" + name + " -->")
	i := bytes.Index(doc, begin)
	if i < 0 {
		return nil, fmt.Errorf("no %q line", begin)
	}
	nl := bytes.IndexByte(doc[i:], '\n')
	j := bytes.Index(doc, end)
	if nl < 0 || j < i+nl {
		return nil, fmt.Errorf("no %q line after %q", end, begin)
	}
	var out bytes.Buffer
	out.Write(doc[:i+nl+1])
	out.Write(content)
	out.Write(doc[j:])
	return out.Bytes(), nil
}
