package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

// controllers are the kube-controller-manager loops a bare apiserver lacks and
// tests rely on:
//   - namespace-controller: empties and removes Terminating namespaces;
//   - garbage-collector-controller: deletes dependents via ownerReferences;
//   - resourcequota-controller: fills ResourceQuota status (hard and used);
//   - serviceaccount-controller: creates the "default" ServiceAccount;
//   - serviceaccount-token-controller: token Secrets for service accounts;
//   - root-ca-certificate-publisher-controller: kube-root-ca.crt ConfigMaps;
//   - clusterrole-aggregation-controller: fills the aggregated ClusterRoles
//     (admin, edit, view), which a tenant's RoleBindings grant, so tests can
//     act as a tenant with what a real cluster gives it.
//
// Nothing that needs kubelets or a cloud runs (--workloads adds
// workloadControllers).
var controllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"resourcequota-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"clusterrole-aggregation-controller",
}

// controllerManagerArgs returns the kube-controller-manager command line
// running ctrls.
func controllerManagerArgs(kubeconfig string, p pki, ctrls []string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(ctrls, ","),
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--service-account-private-key-file=" + p.SAKey(),
		"--root-ca-file=" + p.CACert(),
		// No HTTPS endpoint of its own (and so no delegated authn/authz).
		"--secure-port=0",
		"--profiling=false",
	}
}

// newControllerManagerOptions parses args the way the
// kube-controller-manager command does.
func newControllerManagerOptions(args []string) (*kcmoptions.KubeControllerManagerOptions, error) {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	for _, f := range s.Flags(kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()).FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-controller-manager flags: %w", err)
	}
	return s, nil
}

// runControllerManager builds the controller manager's config (clients for
// the apiserver, which must be up) and runs the controllers until ctx is
// cancelled.
func runControllerManager(ctx context.Context, s *kcmoptions.KubeControllerManagerOptions) error {
	c, err := s.Config(ctx, kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases())
	if err != nil {
		return fmt.Errorf("kube-controller-manager: %w", err)
	}
	return kcmapp.Run(ctx, c.Complete())
}
