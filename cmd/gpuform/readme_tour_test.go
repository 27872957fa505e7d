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

// tourSteps reads the commands of a region of README.md: the console
// blocks between "<!-- region:" and "<!-- /region -->", a command per "$ " line (with
// its here-document), the lines after it its output, and "exit N" the exit
// status of a command that ends in echo "exit $?".
func tourSteps(t *testing.T, readme []byte, region string) []tourStep {
	t.Helper()
	begin := bytes.Index(readme, []byte("<!-- "+region+":"))
	end := bytes.Index(readme, []byte("<!-- /"+region+" -->"))
	if begin < 0 || end < begin {
		t.Fatalf("README.md has no %s (<!-- %[1]s: ... <!-- /%[1]s -->)", region)
	}
	offset := bytes.Count(readme[:begin], []byte("\n"))
	var steps []tourStep
	for _, b := range Blocks(readme[begin:end]) {
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
	steps := tourSteps(t, readme, "tour")
	ran := map[string]bool{}
	for _, s := range steps {
		if args, _ := Split(s.cmd); len(args) > 1 && args[0] == "gpuform" {
			ran[args[1]] = true
		}
	}
	for _, c := range []string{"validate", "plan", "apply", "drift"} {
		if !ran[c] {
			t.Errorf("the tour does not run gpuform %s", c)
		}
	}
	if len(steps) < 10 {
		t.Errorf("the tour has %d commands", len(steps))
	}
	tmp := t.TempDir()
	runSteps(t, steps, tmp, map[string]string{"/tmp/tour": filepath.Join(tmp, "tour")})
}

// README.md's session of make demo is what the binary prints: the same
// commands on copies of examples/quickstart and examples/bank.
func TestReadmeDemoSession(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := tourSteps(t, readme, "session")
	if len(steps) < 5 {
		t.Errorf("the session has %d commands", len(steps))
	}
	tmp := t.TempDir()
	replace := map[string]string{"bin/gpuform": "gpuform"}
	for _, ex := range []string{"quickstart", "bank"} {
		dir := filepath.Join(tmp, ex)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		names, _ := filepath.Glob(filepath.Join(repoRoot, "examples", ex, "*.hcl"))
		for _, name := range names {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		replace["examples/"+ex] = dir
	}
	runSteps(t, steps, tmp, replace)
}

// runSteps runs steps in order from the repository's root, with the
// replacements made in commands and the output they show: gpuform
// in-process in the directory the steps are in, other lines with bash.
func runSteps(t *testing.T, steps []tourStep, tmp string, replace map[string]string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the shell lines need bash: %v", err)
	}
	cwd, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	subst := func(s string) string {
		for from, to := range replace {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	env := append(os.Environ(), "HOME="+tmp, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=tour", "GIT_AUTHOR_EMAIL=tour@example.com",
		"GIT_COMMITTER_NAME=tour", "GIT_COMMITTER_EMAIL=tour@example.com")
	pwdFile := filepath.Join(tmp, "pwd")
	for _, s := range steps {
		cmd := subst(s.cmd)
		var r result
		if args, err := Split(cmd); err == nil && len(args) > 0 && args[0] == "gpuform" && !strings.Contains(cmd, "\n") {
			// In the steps' directory, as the reader is: paths print as given.
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
			t.Fatalf("README.md:%d: %s: exit %d, README shows %d\n%s%s", s.line, s.cmd, r.code, s.code, r.stdout, r.stderr)
		}
		// Standard error's lines may come before standard output's (a
		// warning) or after them (an error): either order will do.
		want := subst(strings.Join(s.want, "\n"))
		if missing := tourOutput(want, r.stdout+r.stderr); missing != "" && tourOutput(want, r.stderr+r.stdout) != "" {
			t.Errorf("README.md:%d: %s: %s\n--- printed:\n%s%s", s.line, s.cmd, missing, r.stdout, r.stderr)
		}
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
		if strings.TrimSpace(l) == "..." {
			gaps = true
			continue
		}
		for j < len(g) && !shownAs(g[j], l) {
			if !gaps {
				return "printed " + strconv.Quote(g[j]) + " where README shows " + strconv.Quote(l)
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
		return "prints " + strconv.Quote(g[j]) + " after what README shows"
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

// README.md's first command is make demo, its second make test: what a
// newcomer runs before reading further.
func TestReadmeStartsWithDemoAndTest(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, b := range Blocks(readme) {
		for _, l := range b.Lines {
			if words, err := Split(strings.TrimPrefix(l, "$ ")); err == nil && len(words) > 0 {
				cmds = append(cmds, strings.Join(words, " "))
			}
		}
		if len(cmds) >= 2 {
			break
		}
	}
	if len(cmds) < 2 || cmds[0] != "make demo" || cmds[1] != "make test" {
		t.Errorf("README.md's first commands are %q, want make demo then make test", cmds)
	}
}
