// Package files is the one place gpuform reads and writes files: every
// read is of a regular file of bounded size, confined to a directory (no
// symbolic link or ".." leading out of it), and every write replaces its
// file through a temporary file and a rename, confined the same way.
//
// Which directory confines a file depends on who named it: a file the
// configuration names (file(), the cluster block's kubeconfig and
// simulated cluster) is confined to the configuration directory; a file
// the operator names on the command line (--var-file, a plan file, fmt's
// files, --out) to its own directory, so that a symbolic link planted
// where the operator expects a file cannot lead elsewhere.
package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// Reasons a file is refused for what it is rather than for an I/O error;
// a *RefusedError wraps one (errors.Is finds it).
var (
	// ErrNotRegular: a FIFO, a device, a socket or a directory. Opening a
	// FIFO blocks until a writer comes; a device like /dev/zero never ends.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrOutside: the name leads outside the directory that confines it,
	// through "..", an absolute path or a symbolic link.
	ErrOutside = errors.New("leads outside its directory (through .., an absolute path or a symbolic link)")
	// ErrTooLarge: the file is over the caller's limit.
	ErrTooLarge = errors.New("is too large")
)

// RefusedError is a file gpuform will not read or write, and why.
type RefusedError struct {
	// Name is the file as the caller named it.
	Name string
	// Reason is ErrNotRegular, ErrOutside or ErrTooLarge.
	Reason error
	// Size is the file's size when it is known to be too large (-1: the
	// file grew past Limit while being read); Limit is the limit.
	Size, Limit int64
}

func (e *RefusedError) Error() string {
	if e.Reason == ErrTooLarge {
		return fmt.Sprintf("%s is larger than the limit of %d bytes", e.Name, e.Limit)
	}
	return e.Name + " " + e.Reason.Error()
}

// Unwrap returns the reason.
func (e *RefusedError) Unwrap() error { return e.Reason }

// errPathEscapes is os.Root's message for a name leading out of the root
// (the error is not exported).
const errPathEscapes = "path escapes from parent"

// outside turns os.Root's escape error into a *RefusedError naming name.
func outside(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err.Error() == errPathEscapes {
		return &RefusedError{Name: name, Reason: ErrOutside}
	}
	return err
}

// localName is name cleaned to the slash-separated form fs.FS and os.Root
// take, or a *RefusedError when it is absolute or climbs out with "..".
func localName(name string) (string, error) {
	if !filepath.IsLocal(name) {
		return "", &RefusedError{Name: name, Reason: ErrOutside}
	}
	return path.Clean(filepath.ToSlash(name)), nil
}

// ReadFS reads name from fsys: a regular file (checked by a stat before
// opening, as opening a FIFO blocks) of at most limit bytes. A name that
// is absolute or climbs out with ".." is refused; fsys confines the rest
// (an os.Root's FS refuses symbolic links leading out).
func ReadFS(fsys fs.FS, name string, limit int64) ([]byte, error) {
	clean, err := localName(name)
	if err != nil {
		return nil, err
	}
	st, err := fs.Stat(fsys, clean)
	if err != nil {
		return nil, outside(name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &RefusedError{Name: name, Reason: ErrNotRegular}
	}
	f, err := fsys.Open(clean)
	if err != nil {
		return nil, outside(name, err)
	}
	defer f.Close()
	return readOpen(f, name, limit)
}

// ReadRoot reads name inside root: a regular file of at most limit bytes,
// checked by a stat before opening and opened without blocking (so a FIFO
// swapped in after the stat cannot hang the read), refused when a symbolic
// link leads out of root.
func ReadRoot(root *os.Root, name string, limit int64) ([]byte, error) {
	clean, err := localName(name)
	if err != nil {
		return nil, err
	}
	// Stat before opening: opening some devices has effects of its own.
	if st, err := root.Stat(clean); err != nil {
		return nil, outside(name, err)
	} else if !st.Mode().IsRegular() {
		return nil, &RefusedError{Name: name, Reason: ErrNotRegular}
	}
	f, err := root.OpenFile(clean, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, outside(name, err)
	}
	defer f.Close()
	return readOpen(f, name, limit)
}

// ReadIn reads name inside directory dir (see ReadRoot).
func ReadIn(dir, name string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadRoot(root, name, limit)
}

// ReadLimited reads the file at p, a path the operator gave: a regular
// file of at most limit bytes, confined to its own directory (a symbolic
// link there may not lead out of it). A FIFO or a device is an error, not
// a read that blocks or never ends.
func ReadLimited(p string, limit int64) ([]byte, error) {
	b, err := ReadIn(filepath.Dir(p), filepath.Base(p), limit)
	return b, renamed(err, p)
}

// renamed makes err, about a file inside p's directory, name p.
func renamed(err error, p string) error {
	var re *RefusedError
	var pe *fs.PathError
	switch {
	case errors.As(err, &re):
		re.Name = p
	case errors.As(err, &pe):
		pe.Path = p
	}
	return err
}

// readOpen checks that f is a regular file within limit and reads it whole.
func readOpen(f fs.File, name string, limit int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &RefusedError{Name: name, Reason: ErrNotRegular}
	}
	if st.Size() > limit {
		return nil, &RefusedError{Name: name, Reason: ErrTooLarge, Size: st.Size(), Limit: limit}
	}
	src, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(src)) > limit {
		return nil, &RefusedError{Name: name, Reason: ErrTooLarge, Size: -1, Limit: limit}
	}
	return src, nil
}

// WriteAtomicIn replaces name inside root with what write writes, mode
// perm: through a temporary file created exclusively beside it (a name no
// one can have planted a symbolic link at) and a rename, so that a reader
// never sees it half written and a symbolic link at name is replaced, not
// followed. The temporary name starts with a dot and ends in a random
// suffix, so node-exporter's textfile collector (*.prom) ignores it.
func WriteAtomicIn(root *os.Root, name string, perm os.FileMode, write func(io.Writer) error) error {
	clean, err := localName(name)
	if err != nil {
		return err
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	tmpName := path.Join(path.Dir(clean), "."+path.Base(clean)+".tmp-"+hex.EncodeToString(suffix))
	tmp, err := root.OpenFile(tmpName, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return outside(name, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			_ = root.Remove(tmpName)
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	done = true
	if err := root.Rename(tmpName, clean); err != nil {
		_ = root.Remove(tmpName)
		return outside(name, err)
	}
	return nil
}

// WriteAtomic replaces the file at p, a path the operator gave, with what
// write writes (see WriteAtomicIn), confined to p's directory.
func WriteAtomic(p string, perm os.FileMode, write func(io.Writer) error) error {
	root, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer root.Close()
	return renamed(WriteAtomicIn(root, filepath.Base(p), perm, write), p)
}

// Rewrite writes data over the existing regular file at p in place,
// keeping its mode and following a symbolic link only within p's
// directory (fmt rewrites a.hcl -> b.hcl as b.hcl, never a file a link
// points to outside).
func Rewrite(p string, data []byte) error {
	root, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.Base(p)
	f, err := root.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return renamed(outside(name, err), p)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return err
	} else if !st.Mode().IsRegular() {
		return &RefusedError{Name: p, Reason: ErrNotRegular}
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}
