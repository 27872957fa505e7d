package main

import (
	"fmt"

	"github.com/gpuform/gpuform/config"
)

// useDirArg makes a command's DIR argument (plan DIR, drift DIR, as
// validate DIR and Terraform's old plan DIR) the configuration directory,
// taken relative to --chdir; no argument keeps --chdir. repo is --repo,
// which a DIR cannot go with.
func (g *globals) useDirArg(args []string, repo string) error {
	if len(args) == 0 {
		return nil
	}
	if repo != "" {
		return fmt.Errorf("%s and --repo both name the configuration: pass one of them", args[0])
	}
	dir, err := config.ArgDir(g.chdir, args)
	if err != nil {
		return err
	}
	g.chdir = dir
	return nil
}
