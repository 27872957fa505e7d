package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/internal/cliflags"
)

func newStateCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Show what the stack owns (its inventory record in the cluster)",
	}
	var o cliflags.Output
	list := &cobra.Command{
		Use:   "list [DIR]",
		Short: "List the objects the stack owns, with the configuration address each was applied from",
		Long: "state list reads the stack's inventory record (ConfigMaps in gpuform-system, which apply\n" +
			"writes) and lists every object gpuform applied and has not deleted since, as Terraform's\n" +
			"state list does. It writes nothing.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.Format()
			if err != nil {
				return err
			}
			if err := g.useDirArg(args, ""); err != nil {
				return err
			}
			st, done, err := g.newStack("", "", connection{})
			if err != nil {
				return err
			}
			defer done()
			res, err := st.State(cmd.Context())
			if err != nil {
				return g.fail(err, "")
			}
			doc := render.StateDoc{Stack: res.Stack, Source: res.Source, Recorded: res.Recorded, Objects: []render.StateRow{}}
			for _, e := range res.Entries {
				doc.Objects = append(doc.Objects, render.StateRowOf(e.Address, e.Key, e.Commit))
			}
			if format == formatJSON {
				return render.JSONValue(g.stdout, doc)
			}
			return render.StateText(g.stdout, doc)
		},
	}
	cliflags.Add(list.Flags(), &o, false, formatText, formatJSON)
	addMemberFlag(cmd.PersistentFlags(), g)
	cmd.AddCommand(list)
	return cmd
}
