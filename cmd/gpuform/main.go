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
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/hugepages"
	"github.com/gpuform/gpuform/internal/memlimit"
	"github.com/gpuform/gpuform/internal/profile"
	"github.com/gpuform/gpuform/internal/textsafe"
)

func main() {
	quietClientGo()
	env := os.Environ()
	_ = os.Unsetenv(engine.PlanKeyEnv) // read from env; no program gpuform runs inherits it
	root := newRootCommand(os.Stdin, os.Stdout, os.Stderr, env)
	if !keepsSmallPages(root, os.Args[1:]) {
		// The heap in 2 MiB pages where the system leaves that to each
		// program, before the command grows it and before gpuform's own
		// memory limit or budget is set.
		hugepages.Advise(os.DirFS("/"), os.Getenv, hugepages.Reserve)
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

// keepsSmallPages reports whether args name a command whose heap stays in
// the runtime's 4 KiB pages: the node agent (a heap that lives for days)
// and apply (minutes of writes under a tight memory budget: the runtime
// returns memory in pieces and grows into it again a little at a time, and
// each return of a whole 2 MiB page followed by one small allocation in it
// faults in 2 MiB the runtime counts as returned; a size-L apply from empty
// peaked at 1,074 MB resident against 353 MB).
func keepsSmallPages(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	return err == nil && (c.Name() == "agent" || c.Name() == "apply")
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

// quietClientGo stops client-go's own logging (klog): gpuform reports every
// error itself, once, with what to do.
func quietClientGo() {
	klog.SetLogger(logr.Discard())
}
