package files_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpuform/gpuform/internal/files"
)

// ReadLimited reads regular files up to the limit and refuses the rest
// without blocking: a FIFO, a directory, a file over the limit.
func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		path  string
		limit int64
		want  string
		err   string
	}{
		{"within the limit", small, 5, "12345", ""},
		{"over the limit", small, 4, "", "larger than the limit of 4 bytes"},
		{"fifo", fifo, 10, "", "is not a regular file"},
		{"directory", dir, 10, "", "is not a regular file"},
		{"missing", filepath.Join(dir, "none"), 10, "", "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := files.ReadLimited(tt.path, tt.limit)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// WriteAtomic replaces the file whole, mode 0644, and leaves neither the
// old content nor a temporary file behind when the write fails.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpuform.prom")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := files.WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	boom := errors.New("boom")
	if err := files.WriteAtomic(path, func(w io.Writer) error { _, _ = io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("a failed write changed the file: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
