package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/internal/cliflags"
)

func newShowCommand(g *globals) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "show PLANFILE",
		Short: "Render a saved plan",
		Long:  "show prints a plan saved by plan --out, as text, JSON or Markdown. It reads no cluster.",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			format, err := f.outputFormat()
			if err != nil {
				return err
			}
			pf, _, err := g.readPlanFile(g.path(args[0]))
			if err != nil {
				return err
			}
			return renderPlan(g, g.stdout, pf.Plan(), nil, format, f.detail)
		},
	}
	cliflags.Add(cmd.Flags(), &f.output, true, formatText, formatJSON, formatMarkdown)
	cmd.Flags().BoolVar(&f.detail, "detail", false, "print every field of created PrometheusRules (the text plan gives one line per rule group)")
	return cmd
}
