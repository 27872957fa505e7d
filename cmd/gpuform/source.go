package main

import (
	"context"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/providers/git"
)

// source says where a configuration was read from: the repository and
// ref asked for (both empty for the working directory), the commit ("" outside
// git) and whether the work tree was dirty.
type source = engine.ConfigSource

// loadValidAt loads and validates the configuration: from the working
// directory when repo and ref are empty (recording its commit and whether
// the tree is dirty), else from the configuration directory's path inside
// repo (a local path or a URL; "" for the working directory's repository)
// at ref, through go-git without a checkout.
func (g *globals) loadValidAt(ctx context.Context, repo, ref string) (*config.Config, source, hcl.Diagnostics) {
	if repo == "" && ref == "" {
		cfg, diags := g.loadValid()
		src := source{}
		if commit, dirty, ok := git.Head(g.dir()); ok {
			src.Commit, src.Dirty = commit, dirty
		}
		return cfg, src, diags
	}
	fail := func(err error) (*config.Config, source, hcl.Diagnostics) {
		return &config.Config{}, source{Repo: repo, Ref: ref}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the configuration from git", Detail: err.Error() + "."}}
	}
	if ref == "" {
		ref = "HEAD"
	}
	r, dir, err := g.openRepo(ctx, repo)
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	rev, err := r.At(ref, dir)
	if err != nil {
		return fail(err)
	}
	defer g.loadGC()()
	opts, diags := g.loadOptions()
	if diags.HasErrors() {
		return &config.Config{}, source{}, diags
	}
	cfg, diags := config.LoadFS(rev.FS, opts)
	src := source{Repo: repo, Ref: ref, Commit: rev.Commit}
	if diags.HasErrors() {
		return cfg, src, diags
	}
	return cfg, src, append(diags, compile.Validate(cfg, mig.Default())...)
}

func isURL(s string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git@", "file://"} {
		if len(s) > len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// openRepo opens the repository a configuration is read from and returns the
// configuration directory inside it: --repo as a local path or a URL
// (cloned; the configuration is --chdir inside it), or the working
// directory's repository.
func (g *globals) openRepo(ctx context.Context, repo string) (*git.Repo, string, error) {
	var r *git.Repo
	var err error
	dir := "."
	switch {
	case repo == "":
		r, err = git.Open(g.dir())
		if err == nil {
			dir, err = r.RelDir(g.dir())
		}
	case isURL(repo):
		r, err = git.Clone(ctx, repo, g.env)
		if err == nil && g.chdir != "" {
			dir = g.chdir
		}
	default:
		r, err = git.Open(repo)
		if err == nil {
			dir, err = r.RelDir(repo)
		}
	}
	if err != nil && r != nil {
		r.Close()
	}
	return r, dir, err
}
