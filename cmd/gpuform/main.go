// Command gpuform is plan/apply for GPU multi-tenancy on Kubernetes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/hugepages"
	"github.com/gpuform/gpuform/internal/memlimit"
	"github.com/gpuform/gpuform/internal/profile"
	"github.com/gpuform/gpuform/internal/textsafe"
)

func main() {
	klog.SetLogger(logr.Discard()) // client-go's own logging: gpuform reports every error itself, once
	env := os.Environ()
	_ = os.Unsetenv(engine.PlanKeyEnv) // read from env; no program gpuform runs inherits it
	root := newRootCommand(os.Stdin, os.Stdout, os.Stderr, env)
	if c, _, err := root.Find(os.Args[1:]); err != nil || hugepages.ForCommand(c.Name()) {
		hugepages.Advise(os.DirFS("/"), os.Getenv, hugepages.Reserve) // before the limit and budget below
	}
	var tuner *memlimit.Tuner                        // apply lowers its budget (memlimit.FromContext)
	if memlimit.Set(os.DirFS("/"), os.Getenv) == 0 { // a container's limit, unless GOMEMLIMIT says otherwise
		tuner = memlimit.Tune(memlimit.Budget, os.Getenv) // else a budget that grows with what is live
	}
	ctx, stop := signal.NotifyContext(memlimit.NewContext(context.Background(), tuner), os.Interrupt, syscall.SIGTERM)
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
