package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{`gpuform plan --out x.plan`, []string{"gpuform", "plan", "--out", "x.plan"}},
		{`gpuform drift; echo "exit $?"`, []string{"gpuform", "drift"}},
		{`gpuform show p --format markdown > plan.md`, []string{"gpuform", "show", "p", "--format", "markdown"}},
		{`gpuform plan --var 'a=b c' --var "d=\"e\""`, []string{"gpuform", "plan", "--var", "a=b c", "--var", `d="e"`}},
		{`gpuform plan   # a comment`, []string{"gpuform", "plan"}},
		{`gpuform plan 2>/dev/null`, []string{"gpuform", "plan"}},
		{`gpuform plan --var a#b`, []string{"gpuform", "plan", "--var", "a#b"}},
	} {
		got, err := Split(tt.line)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	if _, err := Split(`gpuform plan --var 'a`); err == nil {
		t.Error("an unterminated quote splits")
	}
}

// tree is a small command tree: tool run [--fast] [-n N] ARG, a global --dir.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "A tool"}
	root.PersistentFlags().String("dir", "", "work in `DIR`")
	run := &cobra.Command{Use: "run ARG", Short: "Run it", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }}
	run.Flags().Bool("fast", false, "go fast")
	run.Flags().String("server", "", "ask `URL` (http://host:9090)")
	run.Flags().IntP("count", "n", 3, "run `N` times")
	root.AddCommand(run)
	return root
}

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		q    Quote
		want string // part of the error; "" for none
	}{
		{Quote{Text: "tool run x --fast -n 2 --dir d"}, ""},
		{Quote{Text: "tool --dir d run x"}, ""},
		{Quote{Text: "tool run x --slow"}, "unknown flag: --slow"},
		{Quote{Text: "tool run"}, "accepts 1 arg"},
		{Quote{Text: "tool walk x"}, "unknown command"},
		{Quote{Text: "tool run x -n"}, "needs an argument"},
		{Quote{Text: "tool run ARG [--fast] [-n N]", Synopsis: true}, ""},
		{Quote{Text: "tool run ARG [--fast | --slow]", Synopsis: true}, "unknown flag --slow"},
		{Quote{Text: "tool walk [--fast]", Synopsis: true}, "unknown command"},
		{Quote{Text: "tool run ARG [-nx]", Synopsis: true}, "unknown flag -nx"},
		{Quote{Text: "tool run [--fast]   the --slow flag of another command", Synopsis: true}, ""},
	} {
		err := Check(tree(), tt.q)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Check(%q) = %v, want %q", tt.q.Text, err, tt.want)
		}
	}
}

func TestCommandLines(t *testing.T) {
	md := "text\n```sh\n$ tool run a\nKEY=v bin/tool run b\necho tool\n```\n```console\n$ tool run [--fast]\n      [-n N]\n$ tool run c \\\n    --fast\n```\n"
	got := CommandLines([]byte(md), "tool")
	want := []Quote{{Line: 3, Text: "tool run a"}, {Line: 4, Text: "tool run b"}, {Line: 8, Text: "tool run [--fast] [-n N]", Synopsis: true}, {Line: 10, Text: "tool run c  --fast"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CommandLines = %+v, want %+v", got, want)
	}
}

func TestBlocksFences(t *testing.T) {
	md := "```text\nout\n```\n   ```` ```diff ```` is prose\n- item\n\n  ```\n  nested\n  ```\n"
	got := Blocks([]byte(md))
	if len(got) != 2 || got[0].Info != "text" || got[1].Line != 7 || got[1].End != 9 || got[1].Lines[0] != "  nested" {
		t.Errorf("Blocks = %+v", got)
	}
	// A longer fence holds shorter ones.
	md = "````markdown\n```diff\n+a\n```\n````\nprose `x`\n```sh\ngpuform\n```\n"
	got = Blocks([]byte(md))
	if len(got) != 2 || got[0].End != 5 || len(got[0].Lines) != 3 || got[1].Info != "sh" {
		t.Errorf("Blocks = %+v", got)
	}
	if p := Prose([]byte(md)); p != "\n\n\n\n\nprose `x`\n\n\n\n" {
		t.Errorf("Prose = %q", p)
	}
}

func TestUncovered(t *testing.T) {
	chunks := []string{"Error: ", "list ", ": cannot reach the API server at ", ". Check that it runs", "lost the lock of stack "}
	for _, tt := range []struct {
		msg  string
		want []string
	}{
		{"Error: list nodes: cannot reach the API server at https://h:1. Check that it runs", nil},
		{"Error: list Nodes: cannot reach the API server at h", []string{"Nodes"}},
		{"Error: list <kind>s: cannot reach the API server at ... Check that it runs", nil},
		{"Error: lost the lock ...", nil},
		{"Error: ... cannot reach the API ...", nil},
		{"Error: list nodes: cannot reach the API server at h, so nothing happened", []string{"h, so nothing happened"}},
		{"Error: Refusing to list", []string{"Refusing to list"}},
		{"Error: Refusing list nodes", []string{"Refusing"}},
		{`Error: list "a b c": cannot reach the API server at h`, nil},
	} {
		if got := Uncovered(tt.msg, chunks); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Uncovered(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

func TestReferenceAndSplice(t *testing.T) {
	ref := string(Reference(tree(), "make docs"))
	for _, w := range []string{"## tool run\n", "Run it.", "```\ntool run ARG [flags]\n```", "| `-n, --count N` | `3` | run N times |", "| `--fast` |  | go fast |", "| `--server URL` |  | ask URL (`http://host:9090`) |", "## Global flags", "| `--dir DIR` |  | work in DIR |", "- [`tool run`](#tool-run)"} {
		if !strings.Contains(ref, w) {
			t.Errorf("the reference lacks %q:\n%s", w, ref)
		}
	}
	doc := []byte("a\n<!-- list: generated -->\nold\n<!-- /list -->\nb\n")
	got, err := Splice(doc, "list", Summary(tree(), "cli.md"))
	want := "a\n<!-- list: generated -->\n| command | what it does |\n|---|---|\n| [`tool run ARG [flags]`](cli.md#tool-run) | Run it |\n<!-- /list -->\nb\n"
	if err != nil || string(got) != want {
		t.Errorf("Splice = %q, %v; want %q", got, err, want)
	}
	if _, err := Splice([]byte("no markers"), "list", nil); err == nil {
		t.Error("Splice without markers succeeds")
	}
}
