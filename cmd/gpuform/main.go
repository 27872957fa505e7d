// Command gpuform is plan/apply for GPU multi-tenancy on Kubernetes.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuform/gpuform/internal/cliflags"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/memlimit"
	"github.com/gpuform/gpuform/internal/profile"
	"github.com/gpuform/gpuform/internal/textsafe"
)

func main() {
	klog.SetLogger(logr.Discard()) // client-go's own logging: gpuform reports every error itself, once
	env := os.Environ()
	_ = os.Unsetenv(engine.PlanKeyEnv) // read from env; no program gpuform runs inherits it
	root := newRootCommand(os.Stdin, os.Stdout, os.Stderr, env)
	root.SetArgs(cliflags.Normalize(root, os.Args[1:]))
	// A container's memory limit becomes the runtime's soft limit, set once
	// for the process, unless GOMEMLIMIT is set (docs/performance.md).
	memlimit.Set(os.DirFS("/"), os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfiles := profile.Start()
	err := root.ExecuteContext(ctx)
	stop()
	stopProfiles()
	os.Exit(exitCode(err, os.Stderr))
}

// exitError carries a process exit code; its message, if any, was already printed.
type exitError struct {
	code int
}

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCode maps a command error to the process exit code, printing errors
// that were not printed yet.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	textsafe.Fprintf(stderr, "Error: %s\n", err)
	return 1
}
