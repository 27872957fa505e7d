package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// workloadControllers are the kube-controller-manager loops added with
// --workloads: the Job controller makes a Job's pods (and deletes them when
// Kueue suspends it), so that the pods kube-scheduler binds come from real
// Jobs; the ResourceClaim controller makes the ResourceClaims a pod's
// ResourceClaimTemplates stand for (DRA), which kube-scheduler allocates.
var workloadControllers = []string{"job-controller", "resourceclaim-controller"}

// schedulerArgs returns the kube-scheduler command line: the default
// profile (scheduler name "default-scheduler", every default plugin:
// resources fit, node selectors and affinity, taints and tolerations,
// priority preemption), no leader election and no serving port.
func schedulerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		// No HTTPS endpoint of its own (and so no delegated authn/authz).
		"--secure-port=0",
	}
}

// newSchedulerOptions parses args the way the kube-scheduler command does.
func newSchedulerOptions(args []string) (*schedoptions.Options, error) {
	o := schedoptions.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	for _, f := range o.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-scheduler flags: %w", err)
	}
	name, err := cache.NewInformerName("kube-scheduler")
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	o.InformerName = name
	return o, nil
}

// runScheduler builds the scheduler (clients for the apiserver, which must
// be up) and schedules pods until ctx is cancelled.
func runScheduler(ctx context.Context, o *schedoptions.Options) error {
	cc, sched, err := schedapp.Setup(ctx, o)
	if err != nil {
		return fmt.Errorf("kube-scheduler: %w", err)
	}
	err = schedapp.Run(ctx, cc, sched)
	if ctx.Err() != nil {
		return nil // stopped
	}
	return fmt.Errorf("kube-scheduler: %w", err)
}
