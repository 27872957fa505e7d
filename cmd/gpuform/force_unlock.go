package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/textsafe"
)

func newForceUnlockCommand(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "force-unlock LOCK_ID",
		Short: "Remove a stack's apply lock left by a run that died",
		Long: "force-unlock deletes the stack's lock Lease if its ID is LOCK_ID (the ID the lock error\n" +
			"printed). Use it only when the run holding the lock is gone. The stack comes from the\n" +
			"configuration, or from --stack.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, done, err := g.newStack("", "", connection{})
			if err != nil && name == "" {
				return err
			}
			if err != nil {
				// A --var-file problem (printed): the configuration plays no
				// part, --stack names the stack.
				st, done = stack.New(nil, g.connect(connection{}), g.stackOptions(config.Options{})), func() {}
			}
			defer done()
			unlocked, err := st.ForceUnlock(cmd.Context(), name, args[0])
			if err != nil {
				return g.fail(err, "")
			}
			textsafe.Fprintf(g.stdout, "gpuform state has been successfully unlocked: stack %s, lock %s.\n", unlocked, args[0])
			return nil
		},
	}
	addMemberFlag(cmd.Flags(), g)
	cmd.Flags().StringVar(&name, "stack", "", "the stack to unlock (default: the configuration's)")
	return cmd
}
