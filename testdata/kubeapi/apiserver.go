package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// serviceAccountIssuer is the iss claim of service account tokens.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// apiserverArgs returns the kube-apiserver command line for this harness.
// extra (the arguments after "--" on our own command line) come last and so
// override the defaults.
func apiserverArgs(dir string, p pki, etcdURL string, port int, extra []string) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + dir + "/pki/generated",
		"--tls-cert-file=" + p.ServingCert(),
		"--tls-private-key-file=" + p.ServingKey(),
		"--client-ca-file=" + p.CACert(),
		"--token-auth-file=" + p.TokenFile(),
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + p.SAKey(),
		"--service-account-signing-key-file=" + p.SAKey(),
		"--service-cluster-ip-range=10.0.0.0/24",
		// No endpoints for the kubernetes service: nothing outside loopback
		// can reach us, and the lease reconciler only adds churn.
		"--endpoint-reconciler-type=none",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--profiling=false",
		"--enable-logs-handler=false",
	}
	return append(args, extra...)
}

// newAPIServerOptions parses args the way the kube-apiserver command does
// (options.NewServerRunOptions, flags, Complete, Validate) and makes the
// server serve on ln instead of opening its own listener.
func newAPIServerOptions(ctx context.Context, args []string, ln net.Listener) (apiserveroptions.CompletedOptions, error) {
	s := apiserveroptions.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return apiserveroptions.CompletedOptions{}, fmt.Errorf("kube-apiserver flags: %w", err)
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return apiserveroptions.CompletedOptions{}, err
	}
	// As the kube-apiserver command does: loopback clients should not log
	// self-issued warnings.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	s.SecureServing.Listener = ln

	completed, err := s.Complete(ctx)
	if err != nil {
		return apiserveroptions.CompletedOptions{}, fmt.Errorf("kube-apiserver: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return apiserveroptions.CompletedOptions{}, fmt.Errorf("kube-apiserver: %w", utilerrors.NewAggregate(errs))
	}
	return completed, nil
}

// runAPIServer serves until ctx is cancelled and the server has shut down.
func runAPIServer(ctx context.Context, opts apiserveroptions.CompletedOptions) error {
	return apiserverapp.Run(ctx, opts)
}
