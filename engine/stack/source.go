package stack

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/gpuform/gpuform/engine"
)

// Source is where a Stack reads configurations: a directory, or a
// directory of a git repository at a ref (providers/git).
type Source interface {
	// Read returns a configuration's files. ref "" is the source's own
	// configuration (a directory as it is on disk, or the ref the source
	// was opened at); any other ref is a git revision of the same
	// repository (a branch, a tag, a commit, origin/main), read for a pull
	// request's base (Preview) or for the commits stamped on live objects
	// (Drift).
	Read(ctx context.Context, ref string) (*Files, error)
}

// Files are one configuration's files and where they came from.
type Files struct {
	// Dir is a directory on disk holding the files; file() is confined to
	// it. When empty, the files are in FS.
	Dir string
	// FS holds the files when Dir is empty (a git tree).
	FS fs.FS
	// Origin says where they came from: repository and ref as asked for,
	// the commit ("" outside git) and whether the work tree was dirty.
	Origin engine.ConfigSource
	// Time is when Origin.Commit was made; zero when unknown.
	Time time.Time
}

// Dir is a Source of a configuration directory outside git: it has only
// its own configuration.
type Dir string

// Read returns the directory's files; a ref is an error.
func (d Dir) Read(_ context.Context, ref string) (*Files, error) {
	if ref != "" {
		return nil, fmt.Errorf("read %s at %s: the directory is not read from git", string(d), ref)
	}
	return &Files{Dir: string(d)}, nil
}
