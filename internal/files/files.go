// Package files reads and writes the files gpuform's command line names:
// bounded reads of regular files only, and atomic replacement.
package files

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadLimited reads a regular file of at most limit bytes: a FIFO or a
// device is an error, not a read that blocks or never ends.
func ReadLimited(name string, limit int64) ([]byte, error) {
	// Stat before opening: opening a FIFO blocks until a writer comes.
	if st, err := os.Stat(name); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	src, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(src)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", name, limit)
	}
	return src, nil
}

// WriteAtomic writes a file through a temporary file in the same
// directory and a rename, so that a reader (node-exporter's textfile
// collector) never sees it half written. The temporary name does not end
// in .prom, so the collector ignores it.
func WriteAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		done = true
		return err
	}
	done = true
	return nil
}
