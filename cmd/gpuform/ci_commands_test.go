package main

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ciCommand is a gpuform command line of a CI integration's script.
type ciCommand struct {
	where string // the job or step, as ciScripts names it
	quote Quote
}

// ciIntegrations are the files whose scripts run gpuform, with the commands
// (command paths) each must run: a check that finds no command checks nothing.
var ciIntegrations = map[string][]string{
	"action.yml":            {"gpuform apply", "gpuform drift", "gpuform plan", "gpuform version"},
	"ci/gitlab/gpuform.yml": {"gpuform apply", "gpuform drift", "gpuform plan", "gpuform version"},
}

// ciDocument parses a CI integration: a GitLab template's spec is a YAML
// document of its own, before the jobs.
func ciDocument(t *testing.T, src []byte) map[string]any {
	t.Helper()
	body := src
	if i := bytes.Index(src, []byte("\n---\n")); i >= 0 {
		body = src[i+5:]
	}
	var doc map[string]any
	if err := yaml.UnmarshalStrict(body, &doc); err != nil {
		t.Fatalf("not well-formed YAML: %v", err)
	}
	return doc
}

// ciCommands returns the gpuform command lines of src's scripts (GitHub
// Actions run steps, GitLab script and before_script lines): lines
// continued with a backslash are joined, and each simple command (split at
// ;, &&, ||, |, $( and backquotes) whose program is gpuform or a path ending
// in /gpuform, after variable assignments, is one command line.
func ciCommands(t *testing.T, src []byte) []ciCommand {
	t.Helper()
	var out []ciCommand
	scripts := ciScripts(t, ciDocument(t, src))
	wheres := make([]string, 0, len(scripts))
	for w := range scripts {
		wheres = append(wheres, w)
	}
	sort.Strings(wheres)
	for _, where := range wheres {
		script := ghExpr.ReplaceAllString(scripts[where], "EXPR")
		script = strings.ReplaceAll(script, "\\\n", " ")
		for i, line := range strings.Split(script, "\n") {
			for _, seg := range shellSegments(line) {
				words, err := Split(strings.TrimSpace(seg))
				if err != nil {
					if gpuformWord.MatchString(seg) {
						t.Errorf("%s line %d: %v", where, i+1, err)
					}
					continue
				}
				for len(words) > 0 && (shellAssignment.MatchString(words[0]) || shellPrefix[words[0]]) {
					words = words[1:]
				}
				if len(words) == 0 || path.Base(words[0]) != "gpuform" {
					continue
				}
				quoted := []string{"gpuform"}
				for _, w := range words[1:] {
					quoted = append(quoted, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
				}
				out = append(out, ciCommand{where: where, quote: Quote{Line: i + 1, Text: strings.Join(quoted, " ")}})
			}
		}
	}
	return out
}

// shellAssignment is a variable assignment before a command (GOBIN=dir go ...).
var shellAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellPrefix are the words that may come before a command in a script.
var shellPrefix = map[string]bool{"if": true, "then": true, "else": true, "do": true, "!": true, "exec": true, "time": true, "command": true, "while": true, "until": true}

// shellSegments splits a script line at the shell's command separators
// outside quotes (;, &, |, parentheses) and at command substitutions ($(...)
// and backquotes, inside double quotes too), so that each segment starts
// with a command.
func shellSegments(line string) []string {
	var out []string
	var outer []bool // for each open $(: whether it opened inside double quotes
	start, inSingle, inDouble, inBack := 0, false, false, false
	cut := func(i, skip int) {
		out = append(out, line[start:i])
		start = i + skip
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && !inSingle:
			i++
		case c == '\'' && !inDouble:
			inSingle = !inSingle
		case inSingle:
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			outer = append(outer, inDouble)
			inDouble = false
			cut(i, 2)
			i++
		case c == ')' && !inDouble && len(outer) > 0:
			inDouble = outer[len(outer)-1]
			outer = outer[:len(outer)-1]
			cut(i, 1)
		case c == '`':
			if inBack = !inBack; inBack {
				outer = append(outer, inDouble)
				inDouble = false
			} else if len(outer) > 0 {
				inDouble = outer[len(outer)-1]
				outer = outer[:len(outer)-1]
			}
			cut(i, 1)
		case c == '"':
			inDouble = !inDouble
		case !inDouble && strings.IndexByte(";&|()", c) >= 0:
			cut(i, 1)
		}
	}
	return append(out, line[start:])
}

// gpuformWord finds gpuform as a program name in a segment the splitter
// could not read (a quote left open across lines), so that an unreadable
// gpuform command fails rather than going unchecked.
var gpuformWord = regexp.MustCompile(`(^|[\s/"'])gpuform["']?(\s|$)`)

// TestCICommandsExist: every gpuform command the GitHub Action's run steps
// and the GitLab template's jobs run names a command and flags this gpuform
// has, with a number of arguments it accepts (the check TestDocsCommandLines
// makes of the documents), and each integration runs the commands it must.
func TestCICommandsExist(t *testing.T) {
	for name, want := range ciIntegrations {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "..", name))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, c := range ciCommands(t, src) {
				if err := Check(docsRoot(), c.quote); err != nil {
					t.Errorf("%s: %s line %d: %s\n  %v", name, c.where, c.quote.Line, c.quote.Text, err)
					continue
				}
				args, _ := Split(c.quote.Text)
				cmd, _, _ := docsRoot().Find(args[1:])
				seen[cmd.CommandPath()] = true
			}
			for _, p := range want {
				if !seen[p] {
					t.Errorf("runs no %q (found %v)", p, seen)
				}
			}
		})
	}
}

// TestCICommandsCheckFails: the check above finds a misspelt flag, a flag
// of another command, an unknown command, an argument too many, and commands
// behind a variable assignment, after && and in a command substitution.
func TestCICommandsCheckFails(t *testing.T) {
	tests := []struct {
		name, file, old, new string
	}{
		{"misspelt flag", "action.yml", "--out-dir", "--outdir"},
		{"another command's flag", "ci/gitlab/gpuform.yml", "drift --ref HEAD", "drift --base HEAD"},
		{"unknown command", "ci/gitlab/gpuform.yml", "--no-color drift", "--no-color drfit"},
		{"an argument too many", "action.yml", `apply "$RUNNER_TEMP/gpuform-plan/gpuform.plan"`, `apply "$RUNNER_TEMP/gpuform-plan/gpuform.plan" again`},
		{"in a command substitution", "ci/gitlab/gpuform.yml", "- gpuform version", `- echo "$(gpuform versoin)"`},
		{"after an assignment", "action.yml", `"$RUNNER_TEMP/gpuform-bin/gpuform" version`, `X=1 "$RUNNER_TEMP/gpuform-bin/gpuform" version --short`},
		{"after &&", "ci/gitlab/gpuform.yml", "- gpuform version", "- true && gpuform version --json-ish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "..", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(src, []byte(tt.old)) != 1 {
				t.Fatalf("%s holds %q %d times, want once", tt.file, tt.old, bytes.Count(src, []byte(tt.old)))
			}
			var failed []string
			for _, c := range ciCommands(t, bytes.Replace(src, []byte(tt.old), []byte(tt.new), 1)) {
				if err := Check(docsRoot(), c.quote); err != nil {
					failed = append(failed, err.Error())
				}
			}
			if len(failed) != 1 {
				t.Errorf("%d commands refused, want 1: %v", len(failed), failed)
			}
		})
	}
}
