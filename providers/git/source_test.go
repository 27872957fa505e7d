package git_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/providers/git"
)

// A Source reads the work tree as it is on disk (with its commit and
// dirtiness), any other ref from the same repository, and with --repo or
// --ref only git.
func TestSourceReadsWorkTreeAndRefs(t *testing.T) {
	root := t.TempDir()
	r, err := gogit.PlainInit(root, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	v1 := commitFiles(t, wt, root, "stack", map[string]string{"main.hcl": "gpuform {\n  stack = \"one\"\n}\n"}, "one")
	v2 := commitFiles(t, wt, root, "stack", map[string]string{"main.hcl": "gpuform {\n  stack = \"two\"\n}\n"}, "two")
	dir := filepath.Join(root, "stack")
	when := time.Unix(1700000000, 0)
	for _, tt := range []struct {
		name       string
		opts       git.SourceOptions
		ref        string
		wantDir    string
		wantOrigin engine.ConfigSource
	}{
		{"work tree", git.SourceOptions{Dir: dir}, "", dir, engine.ConfigSource{Commit: v2}},
		{"work tree's repository at a ref", git.SourceOptions{Dir: dir}, "HEAD~1", "", engine.ConfigSource{Ref: "HEAD~1", Commit: v1}},
		{"--ref", git.SourceOptions{Dir: dir, Ref: v1}, "", "", engine.ConfigSource{Ref: v1, Commit: v1}},
		{"--repo at HEAD", git.SourceOptions{Repo: dir}, "", "", engine.ConfigSource{Repo: dir, Ref: "HEAD", Commit: v2}},
		{"--repo, another ref", git.SourceOptions{Repo: dir, Ref: "HEAD"}, v1, "", engine.ConfigSource{Repo: dir, Ref: v1, Commit: v1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := git.NewSource(tt.opts)
			defer src.Close()
			f, err := src.Read(t.Context(), tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if f.Dir != tt.wantDir || f.Origin != tt.wantOrigin || !f.Time.Equal(when) {
				t.Errorf("Read(%q) = dir %q origin %+v time %v, want %q %+v %v", tt.ref, f.Dir, f.Origin, f.Time, tt.wantDir, tt.wantOrigin, when)
			}
			if tt.wantDir == "" && f.FS == nil {
				t.Errorf("no files")
			}
		})
	}

	// An uncommitted change: the work tree is dirty, refs still read commits.
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("gpuform {\n  stack = \"three\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := git.NewSource(git.SourceOptions{Dir: dir}).Read(t.Context(), "")
	if err != nil || f.Origin != (engine.ConfigSource{Commit: v2, Dirty: true}) {
		t.Errorf("dirty work tree: %+v, %v", f, err)
	}
}

// Outside git a directory has no commit and no other ref.
func TestSourceOutsideGit(t *testing.T) {
	dir := t.TempDir()
	src := git.NewSource(git.SourceOptions{Dir: dir})
	f, err := src.Read(t.Context(), "")
	if err != nil || f.Dir != dir || f.Origin != (engine.ConfigSource{}) || !f.Time.IsZero() {
		t.Errorf("Read = %+v, %v", f, err)
	}
	if _, err := src.Read(t.Context(), "HEAD"); err == nil {
		t.Error("a ref was read outside git")
	}
}
