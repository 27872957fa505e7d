package git_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/providers/git"
)

// commitFiles writes files under dir/sub and commits them.
func commitFiles(t *testing.T, wt *gogit.Worktree, root, sub string, files map[string]string, msg string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, sub, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(filepath.ToSlash(filepath.Join(sub, name))); err != nil {
			t.Fatal(err)
		}
	}
	h, err := wt.Commit(msg, &gogit.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example", When: time.Unix(1700000000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func TestAtReadsEveryRefWithoutCheckout(t *testing.T) {
	root := t.TempDir()
	r, err := gogit.PlainInit(root, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	v1 := commitFiles(t, wt, root, "stack", map[string]string{"main.hcl": "gpuform {\n  stack = \"one\"\n}\n"}, "one")
	v2 := commitFiles(t, wt, root, "stack", map[string]string{"main.hcl": "gpuform {\n  stack = \"two\"\n}\n"}, "two")
	// Uncommitted change: the work tree is dirty, At still reads commits.
	if err := os.WriteFile(filepath.Join(root, "stack", "main.hcl"), []byte("gpuform {\n  stack = \"three\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := git.Open(filepath.Join(root, "stack"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := repo.RelDir(filepath.Join(root, "stack"))
	if err != nil || rel != "stack" {
		t.Fatalf("RelDir = %q, %v", rel, err)
	}
	for _, tt := range []struct {
		ref, commit, stack string
		dirty              bool
	}{
		{"HEAD", v2, "two", true},
		{"HEAD~1", v1, "one", false},
		{v1, v1, "one", false},
		{"master", v2, "two", true},
	} {
		rev, err := repo.At(tt.ref, rel)
		if err != nil {
			t.Fatalf("At(%s): %v", tt.ref, err)
		}
		if rev.Commit != tt.commit || rev.Dirty != tt.dirty {
			t.Errorf("At(%s) = commit %s dirty %v, want %s %v", tt.ref, rev.Commit, rev.Dirty, tt.commit, tt.dirty)
		}
		cfg, diags := config.LoadFS(rev.FS, config.Options{})
		if diags.HasErrors() {
			t.Fatalf("load at %s: %s", tt.ref, diags.Error())
		}
		if cfg.Settings.Stack != tt.stack {
			t.Errorf("stack at %s = %s, want %s", tt.ref, cfg.Settings.Stack, tt.stack)
		}
	}
	if _, err := repo.At("no-such-branch", rel); err == nil {
		t.Error("an unknown ref resolved")
	}
	if _, err := repo.At("HEAD", "missing-dir"); err == nil {
		t.Error("a missing directory was read")
	}
	head, err := git.Open(filepath.Join(root, "stack"))
	if err != nil {
		t.Fatal(err)
	}
	if commit, _, dirty, err := head.Head(); err != nil || commit != v2 || !dirty {
		t.Errorf("Head = %s %v %v", commit, dirty, err)
	}
	if _, err := git.Open(t.TempDir()); err == nil {
		t.Error("Open found a repository in an empty directory")
	}
}

func TestCloneLocalURL(t *testing.T) {
	root := t.TempDir()
	r, _ := gogit.PlainInit(root, false)
	wt, _ := r.Worktree()
	v1 := commitFiles(t, wt, root, ".", map[string]string{"main.hcl": "gpuform {\n  stack = \"cloned\"\n}\n"}, "one")
	repo, err := git.Clone(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	rev, err := repo.At(v1, ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.LoadFS(rev.FS, config.Options{})
	if diags.HasErrors() || cfg.Settings.Stack != "cloned" {
		t.Fatalf("load from the clone: %v", diags)
	}
}

// TestBranch: Branch names the checked-out branch of the repository
// holding a directory, and nothing for a detached HEAD or outside git (a
// signed plan is bound to it); RefName prefers --ref-name, GPUFORM_REF
// and --ref to it, in that order.
func TestBranch(t *testing.T) {
	root := t.TempDir()
	r, err := gogit.PlainInit(root, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	v1 := commitFiles(t, wt, root, "stack", map[string]string{"main.hcl": "gpuform {\n  stack = \"one\"\n}\n"}, "one")
	if got := git.Branch(filepath.Join(root, "stack")); got != "master" {
		t.Errorf("Branch on master = %q", got)
	}
	if err := wt.Checkout(&gogit.CheckoutOptions{Branch: "refs/heads/release/1", Create: true}); err != nil {
		t.Fatal(err)
	}
	if got := git.Branch(filepath.Join(root, "stack")); got != "release/1" {
		t.Errorf("Branch on release/1 = %q", got)
	}
	env := []string{"GPUFORM_REF=refs/heads/ci", "HOME=/x"}
	for _, c := range []struct {
		env         []string
		flag, asked string
		want        string
	}{
		{env, " main ", "v1", "main"},
		{env, "", "v1", "ci"},
		{nil, "", "v1", "v1"},
		{[]string{"GPUFORM_REF= "}, "", "", "release/1"},
	} {
		if got := git.RefName(root, c.env, c.flag, c.asked); got != c.want {
			t.Errorf("RefName(%v, %q, %q) = %q, want %q", c.env, c.flag, c.asked, got, c.want)
		}
	}
	if err := wt.Checkout(&gogit.CheckoutOptions{Hash: plumbing.NewHash(v1)}); err != nil {
		t.Fatal(err)
	}
	if got := git.Branch(root); got != "" {
		t.Errorf("Branch with a detached HEAD = %q, want none", got)
	}
	if got := git.Branch(t.TempDir()); got != "" {
		t.Errorf("Branch outside git = %q, want none", got)
	}
}
