package sim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/providers/sim"
)

// within fails the test when f has not returned in 5 s: a FIFO or a
// device opened for reading blocks or never ends.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("blocked for 5 s on a FIFO or a device")
	}
}

// confined is a configuration directory conf/ holding the simulated
// cluster, beside a file outside it that must never be read or written.
func confined(t *testing.T) (dir, outside string) {
	t.Helper()
	parent := t.TempDir()
	dir = filepath.Join(parent, "conf")
	outside = filepath.Join(parent, "outside.txt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("do not touch"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.sim.hcl"), []byte(simFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	_ = os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	_ = os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The description and the state file are read only as regular files of
// bounded size inside the directory: a FIFO fails at once instead of
// hanging, /dev/zero and a file outside are refused through their links,
// and a name climbing out with ".." is refused.
func TestSimulatedFilesAreConfinedOnRead(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dir, outside string)
		open  string
		want  error
	}{
		{"description is a FIFO", func(t *testing.T, dir, _ string) { mkfifo(t, filepath.Join(dir, "cluster.sim.hcl")) }, "cluster.sim.hcl", files.ErrNotRegular},
		{"description links to /dev/zero", func(t *testing.T, dir, _ string) { symlink(t, "/dev/zero", filepath.Join(dir, "cluster.sim.hcl")) }, "cluster.sim.hcl", files.ErrOutside},
		{"description links outside", func(t *testing.T, dir, outside string) {
			if err := os.WriteFile(outside, []byte(simFile), 0o644); err != nil {
				t.Fatal(err)
			}
			symlink(t, outside, filepath.Join(dir, "cluster.sim.hcl"))
		}, "cluster.sim.hcl", files.ErrOutside},
		{"description named with ..", nil, "../conf/cluster.sim.hcl", files.ErrOutside},
		{"state is a FIFO", func(t *testing.T, dir, _ string) { mkfifo(t, filepath.Join(dir, "cluster.sim.state.json")) }, "cluster.sim.hcl", files.ErrNotRegular},
		{"state links outside", func(t *testing.T, dir, outside string) {
			symlink(t, outside, filepath.Join(dir, "cluster.sim.state.json"))
		}, "cluster.sim.hcl", files.ErrOutside},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, outside := confined(t)
			if tt.setup != nil {
				tt.setup(t, dir, outside)
			}
			var err error
			within(t, func() { _, err = sim.OpenIn(dir, tt.open, sim.CatalogGPUs{}) })
			if !errors.Is(err, tt.want) {
				t.Fatalf("OpenIn: %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), "do not touch") {
				t.Fatalf("the error shows the file outside: %v", err)
			}
		})
	}
}

// An apply writes the state through a temporary file no one can have
// planted a link at: before, it wrote cluster.sim.state.json.tmp with
// os.WriteFile, which followed a link planted there and overwrote the file
// it pointed to. A link at the state file itself is replaced, not followed.
func TestSimulatedStateWriteFollowsNoLink(t *testing.T) {
	_, d, _ := setup(t)
	dir, outside := confined(t)
	symlink(t, outside, filepath.Join(dir, "cluster.sim.state.json.tmp"))
	c, err := sim.OpenIn(dir, "cluster.sim.hcl", sim.CatalogGPUs{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := engine.Apply(context.Background(), plan(t, c, d), c, engine.ApplyOptions{}); !rep.OK() {
		t.Fatalf("apply: %+v", rep.Results)
	}
	if b, _ := os.ReadFile(outside); string(b) != "do not touch" {
		t.Fatalf("apply wrote through the planted link: the file outside now starts %.40q", b)
	}
	st, err := os.Lstat(filepath.Join(dir, "cluster.sim.state.json"))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("state file: %v, %v; want a regular file", st, err)
	}
	if c2, err := sim.OpenIn(dir, "cluster.sim.hcl", sim.CatalogGPUs{}); err != nil || plan(t, c2, d).HasChanges() {
		t.Fatalf("reopened after apply: %v (or the plan has changes)", err)
	}
}

// The lock file is created exclusively and read as a bounded regular file:
// a FIFO planted at its name is reported at once instead of hanging the
// apply, and force-unlock of a link leading out reads nothing outside.
func TestSimulatedLockFileIsConfined(t *testing.T) {
	dir, outside := confined(t)
	c, err := sim.OpenIn(dir, "cluster.sim.hcl", sim.CatalogGPUs{})
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "cluster.sim.state.json.lock")
	mkfifo(t, lock)
	within(t, func() { _, _, err = c.Lock(context.Background(), "quickstart", "me", 0) })
	if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("Lock over a FIFO: %v, want an error saying it is not a regular file", err)
	}
	symlink(t, outside, lock)
	within(t, func() { err = c.ForceUnlock(context.Background(), "quickstart", "x") })
	if !errors.Is(err, files.ErrOutside) {
		t.Fatalf("ForceUnlock through a link leading out: %v, want ErrOutside", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "do not touch" {
		t.Fatalf("the file outside changed: %q", b)
	}
}
