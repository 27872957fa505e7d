package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuform/gpuform/config"
)

// normalizeArgs rewrites Terraform's single-dash long flags (-var x=1,
// -auto-approve, -chdir=DIR) to the double-dash form cobra parses, for every
// name that is a long flag of some command of root and is not a shorthand
// alone (-v stays -v). Everything after "--" is left as it is, and so is
// an argument that is a flag's value (the one after -var or --out).
func normalizeArgs(root *cobra.Command, args []string) []string {
	long := longFlags(root)
	out := make([]string, 0, len(args))
	takesValue := false
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if takesValue {
			takesValue = false
			out = append(out, a)
			continue
		}
		name, _, withValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		dashes := len(a) - len(strings.TrimLeft(a, "-"))
		f, known := long[name]
		if known && (dashes == 1 || dashes == 2) && len(name) > 1 {
			if dashes == 1 {
				a = "-" + a
			}
			// A flag with a value and no "=" takes the next argument.
			takesValue = !withValue && f.NoOptDefVal == ""
		}
		out = append(out, a)
	}
	return out
}

// longFlags are the long flags of root and every command below it, by name.
func longFlags(root *cobra.Command) map[string]*pflag.Flag {
	out := map[string]*pflag.Flag{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { out[f.Name] = f }
		c.PersistentFlags().VisitAll(add)
		c.Flags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// flagError adds a hint to pflag's error for a single-dash word that is
// no flag gpuform knows (-foo), which pflag reads as shorthands.
func flagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	if word, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
		if _, arg, found := strings.Cut(word, " in "); found && len(strings.TrimLeft(arg, "-")) > 1 {
			name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
			return fmt.Errorf("%w (long flags take two dashes: --%s)", err, name)
		}
	}
	return err
}

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

// isConfigArg reports whether apply's argument names a configuration (a
// directory or a .hcl file) rather than a saved plan.
func (g *globals) isConfigArg(arg string) bool {
	if strings.HasSuffix(arg, ".hcl") {
		return true
	}
	p := arg
	if g.chdir != "" && !filepath.IsAbs(p) {
		p = filepath.Join(g.chdir, p)
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
