package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newForceUnlockCommand(g *globals) *cobra.Command {
	var stack string
	cmd := &cobra.Command{
		Use:   "force-unlock LOCK_ID",
		Short: "Remove a stack's apply lock left by a run that died",
		Long: "force-unlock deletes the stack's lock Lease if its ID is LOCK_ID (the ID the lock error\n" +
			"printed). Use it only when the run holding the lock is gone. The stack comes from the\n" +
			"configuration, or from --stack.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, desired, err := g.compile()
			if stack == "" {
				if err != nil {
					return err
				}
				stack = desired.Stack
			} else if err != nil {
				cfg = nil
			}
			client, err := g.openCluster(cfg)
			if err != nil {
				return err
			}
			if err := client.ForceUnlock(cmd.Context(), stack, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "gpuform state has been successfully unlocked: stack %s, lock %s.\n", stack, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&stack, "stack", "", "the stack to unlock (default: the configuration's)")
	return cmd
}
