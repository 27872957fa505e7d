package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/cliflags"
	"github.com/gpuform/gpuform/internal/textsafe"
)

func newValidateCommand(g *globals) *cobra.Command {
	var o cliflags.Output
	cmd := &cobra.Command{
		Use:   "validate [DIR | FILE.hcl...]",
		Short: "Check the configuration offline: syntax, types, references, MIG layouts, names",
		Long: "validate reads every *.hcl file of the working directory, of DIR, or of the directory holding the\n" +
			"FILE.hcl arguments (a directory is a configuration, as in Terraform), and checks it against the GPU\n" +
			"catalog without contacting any cluster. It prints every problem at once and exits 1 on an error.",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.Format()
			if err != nil {
				return err
			}
			asJSON := format == formatJSON
			dir, err := config.ArgDir(g.chdir, args)
			if err != nil {
				return err
			}
			g.chdir = dir
			opts, diags := g.loadOptions()
			cfg := &config.Config{}
			if !diags.HasErrors() {
				cfg, diags = stack.New(stack.Dir(g.dir()), nil, g.stackOptions(opts)).Validate(cmd.Context())
			}
			if asJSON {
				if err := config.WriteJSON(g.stdout, diags); err != nil {
					return err
				}
			} else {
				g.writeDiags(cfg, diags)
			}
			if diags.HasErrors() {
				return &exitError{code: 1}
			}
			if !asJSON {
				textsafe.Fprintf(g.stdout, "Success! The configuration is valid.\n\n%s\n", render.ConfigSummary(cfg))
			}
			return nil
		},
	}
	cliflags.Add(cmd.Flags(), &o, false, formatText, formatJSON)
	return cmd
}
