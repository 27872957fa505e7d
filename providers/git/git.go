// Package git reads gpuform configurations out of git with go-git: at any
// ref of a local repository without a checkout, or of a remote one cloned
// into a temporary directory, and tells which commit a directory is at and
// whether its work tree is dirty.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"

	"github.com/gpuform/gpuform/engine"
)

// MaxFileSize bounds the files read out of git.
const MaxFileSize = 16 << 20

// Revision is a configuration directory at one commit.
type Revision struct {
	// FS holds the directory's files at the commit.
	FS fs.FS
	// Commit is the full commit hash; Ref what was asked for.
	Commit, Ref string
	// Dirty is true when Ref is the work tree's HEAD and the work tree has
	// uncommitted changes (then FS still holds the committed files).
	Dirty bool
	// Time is when the commit was made (its committer's time).
	Time time.Time
}

// Repo is an opened repository.
type Repo struct {
	repo *gogit.Repository
	// root is the work tree root ("" for a bare clone).
	root    string
	cleanup func()
}

// Open opens the repository that holds dir (searching parent directories).
func Open(dir string) (*Repo, error) {
	r, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, fmt.Errorf("open the git repository of %s: %w", dir, err)
	}
	root := ""
	if wt, err := r.Worktree(); err == nil {
		root = wt.Filesystem.Root()
	}
	return &Repo{repo: r, root: root}, nil
}

// Clone clones url (all branches, no checkout) into a temporary directory
// that Close removes. Authentication: GIT_TOKEN (or a netrc entry) for
// HTTPS, the SSH agent for ssh:// and scp-like URLs.
func Clone(ctx context.Context, url string, env []string) (*Repo, error) {
	dir, err := os.MkdirTemp("", "gpuform-git-")
	if err != nil {
		return nil, err
	}
	auth, err := authFor(url, env)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r, err := gogit.PlainCloneContext(ctx, dir, true, &gogit.CloneOptions{URL: url, Auth: auth, Tags: gogit.AllTags})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("clone %s: %w", url, err)
	}
	return &Repo{repo: r, cleanup: func() { os.RemoveAll(dir) }}, nil
}

// Close removes a temporary clone.
func (r *Repo) Close() {
	if r.cleanup != nil {
		r.cleanup()
	}
}

// authFor picks credentials for url from the environment.
func authFor(url string, env []string) (transport.AuthMethod, error) {
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	switch {
	case strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://"):
		if tok := get("GIT_TOKEN"); tok != "" {
			return &githttp.BasicAuth{Username: "x-access-token", Password: tok}, nil
		}
		return nil, nil // go-git reads ~/.netrc itself for HTTP(S)
	case strings.HasPrefix(url, "ssh://") || (strings.Contains(url, "@") && strings.Contains(url, ":")):
		user := "git"
		if at := strings.Index(strings.TrimPrefix(url, "ssh://"), "@"); at > 0 {
			user = strings.TrimPrefix(url, "ssh://")[:at]
		}
		auth, err := gitssh.NewSSHAgentAuth(user)
		if err != nil {
			return nil, fmt.Errorf("ssh authentication for %s needs a running SSH agent (SSH_AUTH_SOCK): %w", url, err)
		}
		return auth, nil
	}
	return nil, nil
}

// At returns directory dir (relative to the repository root) at ref: a
// branch, tag, commit hash, or an expression such as HEAD~1 or
// origin/main. It reads the object store, never the work tree.
func (r *Repo) At(ref, dir string) (*Revision, error) {
	h, err := r.repo.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		return nil, fmt.Errorf("resolve git ref %q: %w", ref, err)
	}
	c, err := r.repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read the tree of %s: %w", h, err)
	}
	dir = path.Clean(filepath.ToSlash(dir))
	if dir != "." {
		tree, err = tree.Tree(dir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return nil, fmt.Errorf("%s has no directory %s", shortHash(h.String()), dir)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", dir, shortHash(h.String()), err)
		}
	}
	rev := &Revision{FS: &treeFS{tree: tree, when: c.Committer.When}, Commit: h.String(), Ref: ref, Time: c.Committer.When}
	if head, err := r.repo.Head(); err == nil && head.Hash() == *h {
		rev.Dirty = r.dirty()
	}
	return rev, nil
}

// RelDir returns dir relative to the repository's work tree root.
func (r *Repo) RelDir(dir string) (string, error) {
	if r.root == "" {
		return ".", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root := r.root
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside the repository %s", dir, r.root)
	}
	return filepath.ToSlash(rel), nil
}

// dirty reports whether the work tree has uncommitted changes.
func (r *Repo) dirty() bool {
	wt, err := r.repo.Worktree()
	if err != nil {
		return false
	}
	st, err := wt.Status()
	if err != nil {
		return false
	}
	return !st.IsClean()
}

// Branch returns the branch the work tree holding dir has checked out
// ("main"); "" when dir is not in a git repository or HEAD is detached.
func Branch(dir string) string {
	r, err := Open(dir)
	if err != nil {
		return ""
	}
	h, err := r.repo.Head()
	if err != nil || !h.Name().IsBranch() {
		return ""
	}
	return h.Name().Short()
}

// RefName is the git ref gpuform runs from, as plan files record it
// (engine.NormalizeRef): flag (--ref-name) when set, else GPUFORM_REF of
// env, else asked (plan's --ref), else the branch checked out where dir
// is; "" when none is known (a detached HEAD, a directory outside git).
func RefName(dir string, env []string, flag, asked string) string {
	fromEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, engine.RefEnv+"="); ok {
			fromEnv = v // the last one wins, as in a shell
		}
	}
	for _, r := range []string{flag, fromEnv, asked} {
		if r = engine.NormalizeRef(r); r != "" {
			return r
		}
	}
	return Branch(dir)
}

// Head returns the commit the work tree is at, when it was made and
// whether the work tree has uncommitted changes.
func (r *Repo) Head() (commit string, when time.Time, dirty bool, err error) {
	h, err := r.repo.Head()
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("read HEAD: %w", err)
	}
	if c, err := r.repo.CommitObject(h.Hash()); err == nil {
		when = c.Committer.When
	}
	return h.Hash().String(), when, r.dirty(), nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// treeFS is an fs.FS over the files directly in a git tree (configuration
// directories are flat), with fs.ReadDirFS for listing.
type treeFS struct {
	tree *object.Tree
	when time.Time
}

func (t *treeFS) Open(name string) (fs.File, error) {
	if name == "." {
		return &treeDir{fs: t}, nil
	}
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := t.tree.File(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a regular file")}
	}
	if f.Size > MaxFileSize {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("it is %d bytes, over the limit of %d", f.Size, MaxFileSize)}
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, MaxFileSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return &treeFile{name: path.Base(name), r: bytes.NewReader(b), size: int64(len(b)), when: t.when}, nil
}

// ReadDir lists the directory's entries.
func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	var out []fs.DirEntry
	for _, e := range t.tree.Entries {
		out = append(out, fs.FileInfoToDirEntry(&treeInfo{name: e.Name, dir: e.Mode == filemode.Dir, when: t.when}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

type treeDir struct{ fs *treeFS }

func (d *treeDir) Stat() (fs.FileInfo, error) {
	return &treeInfo{name: ".", dir: true, when: d.fs.when}, nil
}
func (d *treeDir) Read([]byte) (int, error) { return 0, fs.ErrInvalid }
func (d *treeDir) Close() error             { return nil }

type treeFile struct {
	name string
	r    *bytes.Reader
	size int64
	when time.Time
}

func (f *treeFile) Stat() (fs.FileInfo, error) {
	return &treeInfo{name: f.name, size: f.size, when: f.when}, nil
}
func (f *treeFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *treeFile) Close() error               { return nil }

type treeInfo struct {
	name string
	size int64
	dir  bool
	when time.Time
}

func (i *treeInfo) Name() string { return i.name }
func (i *treeInfo) Size() int64  { return i.size }
func (i *treeInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i *treeInfo) ModTime() time.Time { return i.when }
func (i *treeInfo) IsDir() bool        { return i.dir }
func (i *treeInfo) Sys() any           { return nil }
