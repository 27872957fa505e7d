package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/internal/clidoc"
)

// tourStep is one command of README.md's tour with what it shows.
type tourStep struct {
	line int
	cmd  string
	// want are the output lines shown, "..." for lines left out.
	want []string
	code int
}

// heredoc is a command's here-document opening: <<'EOF'.
var heredoc = regexp.MustCompile(`<<'(\w+)'`)

// exitEcho is how the tour shows a command's exit status.
const exitEcho = `; echo "exit $?"`

// tourSteps reads the commands of README.md's tour: the console blocks
// between "<!-- tour:" and "<!-- /tour -->", a command per "$ " line (with
// its here-document), the lines after it its output, and "exit N" the exit
// status of a command that ends in echo "exit $?".
func tourSteps(t *testing.T, readme []byte) []tourStep {
	t.Helper()
	begin := bytes.Index(readme, []byte("<!-- tour:"))
	end := bytes.Index(readme, []byte("<!-- /tour -->"))
	if begin < 0 || end < begin {
		t.Fatal("README.md has no tour (<!-- tour: ... <!-- /tour -->)")
	}
	offset := bytes.Count(readme[:begin], []byte("\n"))
	var steps []tourStep
	for _, b := range clidoc.Blocks(readme[begin:end]) {
		if b.Info != "console" {
			continue
		}
		for i := 0; i < len(b.Lines); i++ {
			l := b.Lines[i]
			if !strings.HasPrefix(l, "$ ") {
				if len(steps) == 0 {
					t.Fatalf("README.md:%d: output before the first command", offset+b.Line+1+i)
				}
				steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
				continue
			}
			s := tourStep{line: offset + b.Line + 1 + i, cmd: strings.TrimPrefix(l, "$ ")}
			if m := heredoc.FindStringSubmatch(s.cmd); m != nil {
				for i++; i < len(b.Lines) && b.Lines[i] != m[1]; i++ {
					s.cmd += "\n" + b.Lines[i]
				}
				s.cmd += "\n" + m[1]
			}
			steps = append(steps, s)
		}
	}
	for i := range steps {
		s := &steps[i]
		if !strings.HasSuffix(s.cmd, exitEcho) {
			continue
		}
		s.cmd = strings.TrimSuffix(s.cmd, exitEcho)
		n := len(s.want) - 1
		for n >= 0 && strings.TrimSpace(s.want[n]) == "" {
			n--
		}
		code, err := strconv.Atoi(strings.TrimPrefix(s.want[max(n, 0)], "exit "))
		if n < 0 || err != nil {
			t.Fatalf("README.md:%d: %s shows no \"exit N\" line last", s.line, s.cmd)
		}
		s.code, s.want = code, s.want[:n]
	}
	return steps
}

// README.md's five-minute tour runs as written: every command in order, in
// a fresh directory instead of /tmp/tour, gpuform in-process and the shell
// lines (mkdir, git, a here-document) with bash; each shows its exit status
// and the lines it prints.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := tourSteps(t, readme)
	ran := map[string]bool{}
	for _, s := range steps {
		if args, _ := clidoc.Split(s.cmd); len(args) > 0 && args[0] == "gpuform" && len(args) > 1 {
			ran[args[1]] = true
		}
	}
	for _, c := range []string{"validate", "plan", "apply", "drift"} {
		if !ran[c] {
			t.Errorf("the tour does not run gpuform %s", c)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the tour's shell lines need bash: %v", err)
	}
	tmp := t.TempDir()
	tour := filepath.Join(tmp, "tour")
	cwd, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+tmp, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=tour", "GIT_AUTHOR_EMAIL=tour@example.com",
		"GIT_COMMITTER_NAME=tour", "GIT_COMMITTER_EMAIL=tour@example.com")
	pwdFile := filepath.Join(tmp, "pwd")
	for _, s := range steps {
		cmd := strings.ReplaceAll(s.cmd, "/tmp/tour", tour)
		var r result
		if args, err := clidoc.Split(cmd); err == nil && len(args) > 0 && args[0] == "gpuform" && !strings.Contains(cmd, "\n") {
			// In the tour's directory, as the reader is: paths print as given.
			t.Chdir(cwd)
			r = runGpuform(t, nil, append([]string{"--no-color"}, args[1:]...)...)
		} else {
			if regexp.MustCompile(`\bgpuform\b`).MatchString(cmd) {
				t.Fatalf("README.md:%d: a shell line runs gpuform: give gpuform a line of its own", s.line)
			}
			sh := exec.Command(bash, "-c", `cd "$1" && eval "$2"; rc=$?; pwd > "$3"; exit $rc`, "tour", cwd, cmd, pwdFile)
			sh.Env = env
			out, err := sh.CombinedOutput()
			r = result{stdout: string(out)}
			if ee, ok := err.(*exec.ExitError); ok {
				r.code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if dir, err := os.ReadFile(pwdFile); err == nil {
				cwd = strings.TrimSpace(string(dir))
			}
		}
		if r.code != s.code {
			t.Fatalf("README.md:%d: %s: exit %d, the tour shows %d\n%s%s", s.line, s.cmd, r.code, s.code, r.stdout, r.stderr)
		}
		if missing := tourOutput(strings.ReplaceAll(strings.Join(s.want, "\n"), "/tmp/tour", tour), r.stdout+r.stderr); missing != "" {
			t.Errorf("README.md:%d: %s: %s\n--- printed:\n%s%s", s.line, s.cmd, missing, r.stdout, r.stderr)
		}
	}
	if len(steps) < 10 {
		t.Errorf("the tour has %d commands", len(steps))
	}
}

// tourOutput says how what a step printed differs from what the tour
// shows: the lines shown, in order, blank lines aside; a line "..." stands
// for any lines, "..." at the end of a line for the rest of it, and without
// a "..." line the lines must be all there is.
func tourOutput(want, got string) string {
	nonBlank := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimRight(l, " "); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	w, g := nonBlank(want), nonBlank(got)
	gaps := false
	j := 0
	for _, l := range w {
		if l == "..." {
			gaps = true
			continue
		}
		for j < len(g) && !shownAs(g[j], l) {
			if !gaps {
				return "printed " + strconv.Quote(g[j]) + " where the tour shows " + strconv.Quote(l)
			}
			j++
		}
		if j == len(g) {
			return "does not print " + strconv.Quote(l) + " (in this order)"
		}
		j++
		gaps = false
	}
	if j < len(g) && !gaps {
		return "prints " + strconv.Quote(g[j]) + " after what the tour shows"
	}
	return ""
}

// shownAs reports whether a printed line is the line the tour shows: the
// same, or starting with what the tour shows before a final "...".
func shownAs(printed, shown string) bool {
	if prefix, ok := strings.CutSuffix(shown, "..."); ok && prefix != "" {
		return strings.HasPrefix(printed, prefix)
	}
	return printed == shown
}
