// Package cliflags holds how gpuform reads its command line the way
// Terraform and kubectl users write it: single-dash long flags, one
// -o/--output flag, NO_COLOR.
package cliflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Normalize rewrites Terraform's single-dash long flags (-var x=1,
// -auto-approve, -chdir=DIR) to the double-dash form cobra parses, for every
// name that is a long flag of some command of root and is not a shorthand
// alone (-v stays -v). Everything after "--" is left as it is, and so is
// an argument that is a flag's value (the one after -var or --out).
func Normalize(root *cobra.Command, args []string) []string {
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

// FlagError adds a hint to pflag's error for a single-dash word that is
// no flag gpuform knows (-foo), which pflag reads as shorthands.
func FlagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	if word, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
		if _, arg, found := strings.Cut(word, " in "); found && len(strings.TrimLeft(arg, "-")) > 1 {
			name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
			return fmt.Errorf("%w (long flags take two dashes: --%s)", err, name)
		}
	}
	return err
}

// NoColor reports whether env sets NO_COLOR to a non-empty value
// (no-color.org): the same as --no-color.
func NoColor(env []string) bool {
	return slices.ContainsFunc(env, func(kv string) bool {
		v, ok := strings.CutPrefix(kv, "NO_COLOR=")
		return ok && v != ""
	})
}
