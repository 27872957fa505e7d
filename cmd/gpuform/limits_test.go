package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHostileConfigExitsOne: validate and plan on configurations made to
// exhaust the loader (deep nesting, a file() of a FIFO or outside the
// directory, a for_each of a million instances, invalid UTF-8) print the
// diagnostic with its place and exit 1, before any cluster call; so does fmt
// on a file its parser would overflow on.
func TestHostileConfigExitsOne(t *testing.T) {
	head := "gpuform {\n  stack = \"s\"\n}\n"
	cases := []struct {
		name  string
		files map[string]string
		fifo  string
		// args are global flags before the command.
		args []string
		// fmt is whether gpuform fmt must refuse the file too.
		fmt bool
		// want are parts of the text diagnostic.
		want []string
	}{
		{
			name:  "nesting",
			files: map[string]string{"main.hcl": head + "locals {\n  x = " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + "\n}\n"},
			want:  []string{"Error: Nesting too deep", "on main.hcl line 5", "(config.MaxNesting)"},
			fmt:   true,
		},
		{
			name:  "file-fifo",
			files: map[string]string{"main.hcl": head + "locals {\n  x = file(\"pipe.txt\")\n}\n"},
			fifo:  "pipe.txt",
			want:  []string{"Error: Error in function call", "on main.hcl line 5", "Cannot read pipe.txt: not a regular file."},
		},
		{
			name:  "file-outside",
			files: map[string]string{"main.hcl": head + "locals {\n  x = file(\"../../etc/passwd\")\n}\n"},
			want:  []string{"Error: Error in function call", "on main.hcl line 5", "outside the configuration directory"},
		},
		{
			name:  "for-each-million",
			files: map[string]string{"main.hcl": head + "priority \"p\" {\n  count = 1000000\n  value = count.index\n}\n"},
			want:  []string{"Error: Invalid count argument", "on main.hcl line 5", "the limit is 100000 instances per block"},
		},
		{
			name:  "var-file-fifo",
			files: map[string]string{"main.hcl": head},
			fifo:  "pipe.vars.hcl",
			args:  []string{"--var-file", "pipe.vars.hcl"},
			want:  []string{"pipe.vars.hcl is not a regular file"},
		},
		{
			name:  "invalid-utf8",
			files: map[string]string{"main.hcl": head + "locals {\n  x = \"" + strings.Repeat("\xff", 1<<20) + "\"\n}\n"},
			want:  []string{"Error: Invalid character encoding", "on main.hcl line 5"},
			fmt:   true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, src := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.fifo != "" {
				if err := syscall.Mkfifo(filepath.Join(dir, c.fifo), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A kubeconfig that reaches nothing: plan must stop before any
			// cluster call.
			env := []string{"KUBECONFIG=" + filepath.Join(dir, "no-such-kubeconfig")}
			commands := [][]string{{"validate"}, {"plan"}}
			if c.fmt {
				commands = append(commands, []string{"fmt", "--check"})
			}
			for _, args := range commands {
				r := runGpuform(t, env, append(append([]string{"--chdir", dir, "--no-color"}, c.args...), args...)...)
				if r.code != 1 {
					t.Errorf("%s: exit %d; want 1\nstderr:\n%.2000s", args[0], r.code, r.stderr)
				}
				for _, w := range c.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("%s: stderr lacks %q:\n%.2000s", args[0], w, r.stderr)
					}
				}
				if len(r.stderr) > 64<<10 {
					t.Errorf("%s: %d bytes of diagnostics", args[0], len(r.stderr))
				}
			}
		})
	}
}
