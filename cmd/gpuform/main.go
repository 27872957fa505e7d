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
	klog.SetLogger(logr.Discard()) // client-go's own logging: gpuform reports every error itself, once
	env := os.Environ()
	_ = os.Unsetenv(engine.PlanKeyEnv) // read from env; no program gpuform runs inherits it
	root := newRootCommand(os.Stdin, os.Stdout, os.Stderr, env)
	if advisesHugePages(root, os.Args[1:]) {
		hugepages.Advise(os.DirFS("/"), os.Getenv, hugepages.Reserve) // before the limit and budget below
	}
	tuner := memlimit.Start(os.DirFS("/"), os.Getenv) // apply lowers its budget (memlimit.FromContext)
	ctx, stop := signal.NotifyContext(memlimit.NewContext(context.Background(), tuner), os.Interrupt, syscall.SIGTERM)
	stopProfiles := profile.Start()
	err := root.ExecuteContext(ctx)
	stop()
	stopProfiles()
	os.Exit(exitCode(err, os.Stderr))
}

// advisesHugePages reports whether args' command takes hugepages.ForCommand's advice (no command: yes).
func advisesHugePages(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	return err != nil || hugepages.ForCommand(c.Name())
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
