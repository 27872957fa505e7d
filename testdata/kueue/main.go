// Command kueue runs the Kueue controller manager (sigs.k8s.io/kueue, the
// version pinned in go.mod, from the Go module proxy) against the test
// harness's API server, on 127.0.0.1 only:
//
//   - it server-side applies Kueue's CRDs from MANIFESTS/crds (the module's
//     config/components/crd/bases, copied by mk/kueue.mk) and waits until
//     they are served;
//   - it makes a CA and a serving certificate for 127.0.0.1 under DIR/certs,
//     serves Kueue's admission webhooks on a free loopback port, and
//     registers the Validating/MutatingWebhookConfigurations of
//     MANIFESTS/webhooks.yaml (the module's config/components/webhook/manifests.yaml)
//     with url https://127.0.0.1:PORT/<path> and the CA bundle, keeping only
//     the webhooks this binary serves;
//   - it runs Kueue's core controllers, its scheduler (admission, borrowing,
//     preemption) and the job integrations named by --frameworks
//     (default batch/job and pod), as cmd/kueue does, without leader
//     election, metrics, internal certificate management, provisioning
//     requests or the visibility server;
//   - with --multikueue, it creates Kueue's namespace (kueue-system, where
//     MultiKueue reads the workers' kubeconfig Secrets) and runs
//     MultiKueue's admission-check controllers as a manager cluster's Kueue
//     does (multikueue.go); a worker cluster runs without it.
//
// Usage:
//
//	kueue --kubeconfig FILE --dir DIR [--manifests DIR] [--frameworks LIST] [--ready-timeout D] [--multikueue] [--dra-mapping RESOURCE=CLASS[,CLASS...]]...
//
// When the webhooks answer and are registered it prints one line
// "READY https://127.0.0.1:PORT" (the webhook server) on stdout; nothing
// else goes to stdout. Logs go to DIR/kueue.log. SIGTERM or SIGINT deletes
// the webhook configurations and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("kueue", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the API server (required)")
	dirFlag := fs.String("dir", "", "directory for the certificates, the configuration and the log (required)")
	manifests := fs.String("manifests", "", "directory with crds/*.yaml and webhooks.yaml from the Kueue module (default: kueue-manifests beside this binary)")
	frameworks := fs.String("frameworks", "batch/job,pod", "Kueue job integrations to run, comma-separated")
	withMultiKueue := fs.Bool("multikueue", false, "run MultiKueue's admission-check controllers (a manager cluster), with the kueue-system namespace")
	readyTimeout := fs.Duration("ready-timeout", 2*time.Minute, "give up if not ready within this time")
	var draMappings []string
	fs.Func("dra-mapping", "RESOURCE=CLASS[,CLASS...]: Kueue counts the devices claimed of each DeviceClass as RESOURCE (resources.deviceClassMappings, with the DynamicResourceAllocation feature gate); repeatable", func(v string) error {
		if _, _, ok := strings.Cut(v, "="); !ok {
			return fmt.Errorf("want RESOURCE=CLASS[,CLASS...], got %q", v)
		}
		draMappings = append(draMappings, v)
		return nil
	})
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *kubeconfig == "" || *dirFlag == "" {
		fmt.Fprintln(os.Stderr, "kueue: --kubeconfig and --dir are required")
		return 2
	}
	if *manifests == "" {
		exe, err := os.Executable()
		if err != nil {
			return fail(err)
		}
		*manifests = filepath.Join(filepath.Dir(exe), "kueue-manifests")
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "kueue.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	logger := zap.New(zap.WriteTo(logf))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	restCfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fail(fmt.Errorf("kubeconfig: %w", err))
	}
	restCfg.UserAgent = "kueue-harness"

	readyCtx, readyCancel := context.WithTimeout(ctx, *readyTimeout)
	defer readyCancel()
	if err := applyCRDs(readyCtx, restCfg, filepath.Join(*manifests, "crds")); err != nil {
		return fail(fmt.Errorf("CRDs: %w", err))
	}
	if *withMultiKueue {
		if err := ensureNamespace(readyCtx, restCfg, "kueue-system"); err != nil {
			return fail(err)
		}
	}
	certDir := filepath.Join(dir, "certs")
	caPEM, err := writeServingCert(certDir)
	if err != nil {
		return fail(fmt.Errorf("certificates: %w", err))
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := writeConfig(cfgFile, certDir, port, strings.Split(*frameworks, ","), draMappings); err != nil {
		return fail(err)
	}
	mgr, err := newManager(ctx, restCfg, cfgFile, *withMultiKueue)
	if err != nil {
		return fail(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	hooks, err := registerWebhooks(readyCtx, restCfg, mgr, filepath.Join(*manifests, "webhooks.yaml"), url, caPEM, done)
	if err != nil {
		cancel()
		<-done
		return fail(fmt.Errorf("webhooks: %w", err))
	}
	fmt.Printf("READY %s\n", url)

	code := 0
	select {
	case <-ctx.Done():
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(os.Stderr, "kueue: manager stopped: %v\n", err)
			code = 1
		}
	}
	cancel()
	// Unregister the webhooks so the API server does not call a server
	// that is gone (their failurePolicy is Fail).
	cleanup, cleanupCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cleanupCancel()
	hooks.remove(cleanup)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return code
}

// freePort returns a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "kueue: %v\n", err)
	return 1
}
