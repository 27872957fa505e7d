package main

import (
	"context"

	"github.com/hashicorp/hcl/v2"
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
			"catalog without contacting any cluster. It prints every problem at once and exits 1 on an error.\n" +
			"A fleet (named cluster blocks) is checked for every cluster, with a summary line each.",
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
			var members []*config.Config
			if !diags.HasErrors() && cfg.IsFleet() {
				members, diags = validateMembers(cmd.Context(), g, opts, cfg)
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
			if asJSON {
				return nil
			}
			textsafe.Fprintf(g.stdout, "Success! The configuration is valid.\n\n")
			if len(members) == 0 {
				textsafe.Fprintf(g.stdout, "%s\n", render.ConfigSummary(cfg))
			}
			for _, m := range members {
				textsafe.Fprintf(g.stdout, "Cluster %s: %s\n", m.Cluster.Name, render.ConfigSummary(m))
			}
			return nil
		},
	}
	cliflags.Add(cmd.Flags(), &o, false, formatText, formatJSON)
	return cmd
}

// validateMembers validates a fleet (cfg, its listing) for each of its
// clusters in turn: each member's configuration, loaded and checked as
// plan would for that cluster alone. It returns the members' checked
// configurations and their diagnostics merged (config.MergeMemberDiagnostics).
func validateMembers(ctx context.Context, g *globals, opts config.Options, cfg *config.Config) ([]*config.Config, hcl.Diagnostics) {
	names := cfg.FleetNames()
	members := make([]*config.Config, 0, len(names))
	perMember := make([]hcl.Diagnostics, 0, len(names))
	for _, name := range names {
		o := opts
		o.Cluster = name
		m, diags := stack.New(stack.Dir(g.dir()), nil, g.stackOptions(o)).Validate(ctx)
		members = append(members, m)
		perMember = append(perMember, diags)
	}
	return members, config.MergeMemberDiagnostics(names, perMember)
}
