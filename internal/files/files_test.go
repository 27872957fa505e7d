package files_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuform/gpuform/internal/files"
)

// within runs f and fails the test if it has not returned in 5 s: a read
// of a FIFO or a device that blocks must fail the test, not hang it.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("blocked for 5 s (a FIFO or a device was opened)")
	}
}

// fixture is a directory with a small file, a FIFO, a secret outside it
// and symbolic links to each.
type fixture struct {
	dir, small, fifo, secret string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	parent := t.TempDir()
	f := fixture{dir: filepath.Join(parent, "conf"), secret: filepath.Join(parent, "secret.txt")}
	f.small, f.fifo = filepath.Join(f.dir, "small"), filepath.Join(f.dir, "fifo")
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{f.small: "12345", f.secret: "s3cr3t"} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(f.fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"in-link": "small", "out-link": f.secret, "zero-link": "/dev/zero", "up-link": "../secret.txt"} {
		if err := os.Symlink(target, filepath.Join(f.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// ReadLimited reads regular files up to the limit, inside their own
// directory, and refuses the rest without blocking: a FIFO, a device, a
// directory, a file over the limit, a symbolic link leading out.
func TestReadLimited(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name   string
		path   string
		limit  int64
		want   string
		reason error
		err    string
	}{
		{"within the limit", f.small, 5, "12345", nil, ""},
		{"link inside the directory", filepath.Join(f.dir, "in-link"), 5, "12345", nil, ""},
		{"over the limit", f.small, 4, "", files.ErrTooLarge, "larger than the limit of 4 bytes"},
		{"fifo", f.fifo, 10, "", files.ErrNotRegular, f.fifo + " is not a regular file"},
		{"/dev/zero", "/dev/zero", 10, "", files.ErrNotRegular, "is not a regular file"},
		{"directory", f.dir, 10, "", files.ErrNotRegular, "is not a regular file"},
		{"link to a file outside", filepath.Join(f.dir, "out-link"), 10, "", files.ErrOutside, "out-link leads outside its directory"},
		{"relative link climbing out", filepath.Join(f.dir, "up-link"), 10, "", files.ErrOutside, "leads outside"},
		{"link to /dev/zero", filepath.Join(f.dir, "zero-link"), 10, "", files.ErrOutside, "leads outside"},
		{"missing", filepath.Join(f.dir, "none"), 10, "", nil, filepath.Join(f.dir, "none") + ": no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			within(t, func() { got, err = files.ReadLimited(tt.path, tt.limit) })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if tt.reason != nil && !errors.Is(err, tt.reason) {
					t.Fatalf("error %v is not %v", err, tt.reason)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// ReadIn and ReadFS refuse names that leave the directory lexically
// (absolute, ".."), before any file is touched.
func TestReadInRefusesNamesOutside(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"../secret.txt", f.secret, "sub/../../secret.txt", ""} {
		_, err := files.ReadIn(f.dir, name, 100)
		if !errors.Is(err, files.ErrOutside) {
			t.Errorf("ReadIn(%q): %v, want ErrOutside", name, err)
		}
		_, err = files.ReadFS(os.DirFS(f.dir), name, 100)
		if !errors.Is(err, files.ErrOutside) {
			t.Errorf("ReadFS(%q): %v, want ErrOutside", name, err)
		}
	}
	if b, err := files.ReadIn(f.dir, "./small", 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadIn(./small) = %q, %v", b, err)
	}
}

// WriteAtomic replaces the file whole, with the mode asked, and leaves
// neither the old content nor a temporary file behind when the write
// fails.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpuform.prom")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := files.WriteAtomic(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	boom := errors.New("boom")
	if err := files.WriteAtomic(path, 0o644, func(w io.Writer) error { _, _ = io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("a failed write changed the file: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// A symbolic link planted where gpuform writes (plan --out, a state file,
// the old fixed temporary name state.json.tmp) is replaced, never
// followed: the file it points to outside keeps its content.
func TestWriteAtomicReplacesLinks(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(f.dir, "out-link")
	if err := files.WriteAtomic(out, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "plan"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.secret); string(b) != "s3cr3t" {
		t.Fatalf("the write followed the link: the file outside now holds %q", b)
	}
	if st, err := os.Lstat(out); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("out-link is %v (%v), want a regular file 0600", st.Mode(), err)
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := files.WriteAtomicIn(root, "../escape", 0o644, func(io.Writer) error { return nil }); !errors.Is(err, files.ErrOutside) {
		t.Fatalf("WriteAtomicIn(../escape): %v, want ErrOutside", err)
	}
}

// Rewrite (fmt) writes in place through a link inside the directory,
// refuses a link leading out and a FIFO without blocking.
func TestRewrite(t *testing.T) {
	f := newFixture(t)
	if err := files.Rewrite(filepath.Join(f.dir, "in-link"), []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.small); string(b) != "abc" {
		t.Errorf("small holds %q, want abc", b)
	}
	if st, _ := os.Lstat(filepath.Join(f.dir, "in-link")); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link inside the directory was replaced")
	}
	err := files.Rewrite(filepath.Join(f.dir, "out-link"), []byte("formatted"))
	if !errors.Is(err, files.ErrOutside) {
		t.Errorf("rewrite through a link out: %v, want ErrOutside", err)
	}
	if b, _ := os.ReadFile(f.secret); string(b) != "s3cr3t" {
		t.Errorf("the file outside now holds %q", b)
	}
	within(t, func() { err = files.Rewrite(f.fifo, []byte("x")) })
	if err == nil {
		t.Error("rewrite of a FIFO succeeded")
	}
}
