package git

import (
	"context"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
)

// SourceOptions say which configuration a Source reads.
type SourceOptions struct {
	// Dir is the configuration directory ("" is "."). With Repo and Ref
	// empty it is read as it is on disk, with the commit its work tree is
	// at; other refs come from its repository.
	Dir string
	// Repo is the repository to read from: "" for Dir's, a local path
	// (the configuration is that directory inside its repository), or a
	// URL (https://, http://, ssh://, git@, file://), cloned into a
	// temporary directory that Close removes (the configuration is Dir
	// inside it).
	Repo string
	// Ref is the ref the configuration is read at; "" with a Repo is HEAD.
	Ref string
	// Env is the process environment (os.Environ form): GIT_TOKEN and the
	// SSH agent authenticate a clone.
	Env []string
}

// Source is a stack.Source over git: a configuration directory as it is
// on disk or at a ref, and the same directory at any other ref. The
// repository is opened (or cloned) on the first Read that needs it.
type Source struct {
	opts SourceOptions

	opened bool
	repo   *Repo
	// dir is the configuration directory inside repo.
	dir string
	err error
}

// NewSource returns the source opts describe; nothing is read yet.
func NewSource(opts SourceOptions) *Source {
	if opts.Dir == "" {
		opts.Dir = "."
	}
	return &Source{opts: opts}
}

// Read returns the configuration's files: at ref "" the source's own (the
// directory on disk, or Ref), else at git ref ref of the same repository.
func (s *Source) Read(ctx context.Context, ref string) (*stack.Files, error) {
	workTree := s.opts.Repo == "" && s.opts.Ref == ""
	if workTree && ref == "" {
		return s.workTree(ctx), nil
	}
	if ref == "" {
		ref = s.opts.Ref
	}
	if ref == "" {
		ref = "HEAD"
	}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	rev, err := s.repo.At(ref, s.dir)
	if err != nil {
		return nil, err
	}
	return &stack.Files{FS: rev.FS, Origin: engine.ConfigSource{Repo: s.opts.Repo, Ref: ref, Commit: rev.Commit}, Time: rev.Time}, nil
}

// workTree is the configuration directory as it is on disk, with the
// commit its work tree is at and whether it is dirty (none outside git).
func (s *Source) workTree(ctx context.Context) *stack.Files {
	f := &stack.Files{Dir: s.opts.Dir}
	// An error here is a directory outside git: it has no commit. (A
	// directory the repository does not hold is an error of other refs.)
	_ = s.open(ctx)
	if s.repo == nil {
		return f
	}
	if commit, when, dirty, err := s.repo.Head(); err == nil {
		f.Origin = engine.ConfigSource{Commit: commit, Dirty: dirty}
		f.Time = when
	}
	return f
}

// open opens the repository and finds the configuration directory in it,
// once.
func (s *Source) open(ctx context.Context) error {
	if s.opened {
		return s.err
	}
	s.opened = true
	s.dir = "."
	switch repo := s.opts.Repo; {
	case repo == "":
		s.repo, s.err = Open(s.opts.Dir)
		if s.err == nil {
			s.dir, s.err = s.repo.RelDir(s.opts.Dir)
		}
	case isURL(repo):
		s.repo, s.err = Clone(ctx, repo, s.opts.Env)
		if s.err == nil {
			s.dir = s.opts.Dir
		}
	default:
		s.repo, s.err = Open(repo)
		if s.err == nil {
			s.dir, s.err = s.repo.RelDir(repo)
		}
	}
	return s.err
}

// Close removes a temporary clone.
func (s *Source) Close() {
	if s.repo != nil {
		s.repo.Close()
	}
}

// isURL tells a repository URL from a local path.
func isURL(s string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git@", "file://"} {
		if len(s) > len(p) && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
