package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine"
)

func newDestroyCommand(g *globals) *cobra.Command {
	f := applyFlags{destroy: true, parallelism: engine.DefaultParallelism, migTimeout: 15 * time.Minute}
	cmd := &cobra.Command{
		Use:   "destroy [DIR]",
		Short: "Delete everything the stack owns, with apply's lock and safety limits",
		Long: "destroy takes the stack's lock, plans the deletion of every object the stack's inventory record\n" +
			"holds (never an object the record lacks, whatever its labels: those are reported), shows the\n" +
			"plan and asks for confirmation (unless --auto-approve), then deletes a tenant's access before\n" +
			"its quota and admission policies. It refuses a protected tenant (protect = true in the\n" +
			"configuration, or on the live namespace) and more deletes than --max-deletes, which has no\n" +
			"default: pass the number of objects the plan deletes. plan --destroy --out FILE saves the\n" +
			"same plan for apply FILE.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.useDirArg(args, ""); err != nil {
				return err
			}
			return g.applyConfig(cmd.Context(), &f)
		},
	}
	fl := cmd.Flags()
	addMemberFlag(fl, g)
	fl.BoolVar(&f.autoApprove, "auto-approve", false, "destroy without asking for confirmation")
	fl.IntVar(&f.maxDeletes, "max-deletes", 0, "most objects the destroy may delete: give the number the plan deletes")
	fl.DurationVar(&f.lockTimeout, "lock-timeout", 0, "how long to wait for the stack's lock (0: fail at once if held)")
	fl.IntVar(&f.parallelism, "parallelism", engine.DefaultParallelism, "how many deletes to run at once")
	addTargetFlag(fl, &f.targets)
	return cmd
}
