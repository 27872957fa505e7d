package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// secret is what a file outside the configuration directory holds; no
// output may show it.
const secret = "s3cr3t-token"

// filesFixture is a configuration directory conf/ (the quickstart on its
// simulated cluster) beside files outside it: outside.txt, which no run
// may change, and secret.hcl, which no run may show.
type filesFixture struct {
	dir, outside, secretFile string
}

func newFilesFixture(t *testing.T) filesFixture {
	t.Helper()
	parent := t.TempDir()
	f := filesFixture{dir: filepath.Join(parent, "conf"), outside: filepath.Join(parent, "outside.txt"), secretFile: filepath.Join(parent, "secret.hcl")}
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"main.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(f.dir, name), string(src))
	}
	put(t, f.outside, "do not touch\n")
	// A syntax error on the secret's line: a diagnostic would quote it.
	put(t, f.secretFile, "token = \""+secret+"\" {\n")
	return f
}

// put writes content to path.
func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f filesFixture) link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(f.dir, name)); err != nil {
		t.Fatal(err)
	}
}

// run runs gpuform in conf/ on its simulated cluster, failing the test
// when it has not returned in 10 s (a FIFO or a device opened), and checks
// that no output shows the secret and that outside.txt is unchanged.
func (f filesFixture) run(t *testing.T, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runGpuform(t, nil, append([]string{"--chdir", f.dir, "--no-color"}, args...)...) }()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("gpuform %s blocked for 10 s", strings.Join(args, " "))
	}
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("gpuform %s shows the secret from outside the directory:\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(f.outside); string(b) != "do not touch\n" {
		t.Errorf("gpuform %s wrote outside the directory: outside.txt now starts %.60q", strings.Join(args, " "), b)
	}
	return r
}

func wantExit(t *testing.T, r result, code int, stderr ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	flat := strings.Join(strings.Fields(r.stderr), " ") // diagnostics wrap long lines
	for _, w := range stderr {
		if !strings.Contains(flat, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// Every file gpuform reads or writes is confined like file() (issue 15,
// item 7). Each case failed before: fmt printed a linked secret in its
// diagnostic and rewrote a file a link pointed to outside; show and apply
// of a FIFO hung and /dev/zero was read up to 256 MiB; plan --out, the
// simulated cluster's state and its temporary file were written through
// planted links; --var-file followed a link and quoted its target; the
// cluster block's simulated file could be anywhere.
func TestFilesAreConfined(t *testing.T) {
	t.Run("fmt does not quote a linked secret", func(t *testing.T) {
		f := newFilesFixture(t)
		f.link(t, f.secretFile, "leak.hcl")
		wantExit(t, f.run(t, "fmt"), 1, "leak.hcl leads outside its directory")
		wantExit(t, f.run(t, "fmt", "leak.hcl"), 1, "leads outside its directory")
	})
	t.Run("fmt does not rewrite a file outside", func(t *testing.T) {
		f := newFilesFixture(t)
		unformatted := filepath.Join(filepath.Dir(f.dir), "other.hcl")
		put(t, unformatted, "a   =   1\n")
		f.link(t, unformatted, "other.hcl")
		wantExit(t, f.run(t, "fmt"), 1, "other.hcl leads outside its directory")
		if b, _ := os.ReadFile(unformatted); string(b) != "a   =   1\n" {
			t.Errorf("fmt rewrote the file outside: %q", b)
		}
	})
	t.Run("show and apply of a FIFO or a device", func(t *testing.T) {
		f := newFilesFixture(t)
		if err := syscall.Mkfifo(filepath.Join(f.dir, "plan.fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"show", "plan.fifo"}, {"apply", "plan.fifo"}, {"show", "/dev/zero"}, {"apply", "/dev/zero"}} {
			wantExit(t, f.run(t, args...), 1, "is not a regular file")
		}
	})
	t.Run("plan --out replaces a planted link", func(t *testing.T) {
		f := newFilesFixture(t)
		f.link(t, f.outside, "plan.json")
		wantExit(t, f.run(t, "plan", "--out", "plan.json"), 0)
		st, err := os.Lstat(filepath.Join(f.dir, "plan.json"))
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Fatalf("plan.json: %v, %v; want a regular file, mode 0600", st, err)
		}
		wantExit(t, f.run(t, "show", "plan.json"), 0)
	})
	t.Run("apply writes the simulated state through no planted link", func(t *testing.T) {
		f := newFilesFixture(t)
		f.link(t, f.outside, "cluster.sim.state.json.tmp")
		wantExit(t, f.run(t, "apply", "--auto-approve"), 0)
		f.link(t, f.outside, "cluster.sim.state.json.lock")
		wantExit(t, f.run(t, "apply", "--auto-approve", "--lock-timeout", "0s"), 1, "cluster.sim.state.json.lock leads outside its directory")
	})
	t.Run("a linked var file is not read", func(t *testing.T) {
		f := newFilesFixture(t)
		f.link(t, f.secretFile, "prod.vars.hcl")
		wantExit(t, f.run(t, "plan", "--var-file", "prod.vars.hcl"), 1, "prod.vars.hcl leads outside its directory")
	})
	t.Run("the cluster block's simulated file stays inside", func(t *testing.T) {
		f := newFilesFixture(t)
		src, _ := os.ReadFile(filepath.Join(f.dir, "cluster.sim.hcl"))
		put(t, filepath.Join(filepath.Dir(f.dir), "elsewhere.sim.hcl"), string(src))
		main, _ := os.ReadFile(filepath.Join(f.dir, "main.hcl"))
		put(t, filepath.Join(f.dir, "main.hcl"), strings.Replace(string(main), `"cluster.sim.hcl"`, `"../elsewhere.sim.hcl"`, 1))
		wantExit(t, f.run(t, "plan"), 1, "main.hcl:7,15-37: ", `simulated file "../elsewhere.sim.hcl" is outside the configuration directory`)
		if _, err := os.Stat(filepath.Join(filepath.Dir(f.dir), "elsewhere.state.json")); err == nil {
			t.Error("a state file was written outside the directory")
		}
		f.link(t, "/dev/zero", "zero.sim.hcl")
		put(t, filepath.Join(f.dir, "main.hcl"), strings.Replace(string(main), `"cluster.sim.hcl"`, `"zero.sim.hcl"`, 1))
		wantExit(t, f.run(t, "plan"), 1, "zero.sim.hcl leads outside its directory")
	})
}
