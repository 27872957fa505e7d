package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

func newImportCommand(g *globals) *cobra.Command {
	var lockTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "import ADDRESS KIND/NAMESPACE/NAME",
		Short: "Adopt one existing object into the stack's inventory record, as terraform import does",
		Long: "import records one existing object, which the block at ADDRESS of the configuration would\n" +
			"create (plan reports it as in the way), in the stack's inventory record, under the stack's\n" +
			"lock; it changes nothing else. The next plan shows at most an update of it. KIND/NAME names a\n" +
			"cluster-scoped object; KIND may be Kind.group. It refuses an object no block produces, one in a\n" +
			"namespace the stack does not manage, and one that belongs to another stack.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, done, err := g.newStack("", "", connection{})
			if err != nil {
				return err
			}
			defer done()
			res, err := st.Import(cmd.Context(), args[0], args[1], stack.ImportOptions{LockHolder: kubernetes.DefaultHolder(), LockWait: lockTimeout})
			if res != nil && res.UnlockErr != nil {
				textsafe.Fprintf(g.stderr, "Warning: %v; run gpuform force-unlock %s if the lock stays.\n", res.UnlockErr, res.LockID)
			}
			if err != nil {
				return g.fail(err, "")
			}
			_, err = textsafe.Fprintf(g.stdout, "Import successful: %s is recorded as %s. Run gpuform plan to see what the configuration changes of it.\n", res.Key, res.Address)
			return err
		},
	}
	addMemberFlag(cmd.Flags(), g)
	cmd.Flags().DurationVar(&lockTimeout, "lock-timeout", 0, "how long to wait for the stack's lock (0: fail at once if held)")
	return cmd
}
