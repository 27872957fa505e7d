package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuform/gpuform/internal/cliflags"
	ver "github.com/gpuform/gpuform/internal/version"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// globals are the flags every command takes.
type globals struct {
	chdir    string
	vars     []string
	varFiles []string
	noColor  bool
	// kubeconfig and context select the cluster, over the cluster block.
	kubeconfig string
	context    string
	// simulated is --simulated: a simulated cluster file instead of a cluster.
	simulated string
	// member is --cluster of the commands that work on one cluster: on a
	// fleet, the member they work on.
	onMember string
	// allowConfigKubeconfig lets the cluster block name the kubeconfig.
	allowConfigKubeconfig bool
	// wrapTransport wraps the Kubernetes client's transport (tests count requests).
	wrapTransport func(http.RoundTripper) http.RoundTripper
	// verbosity is -v/--verbosity: at 1 or more, API requests are logged
	// to stderr with credentials redacted (see kubeTransport).
	verbosity int
	// timeout is --timeout: a deadline for the whole run (0: none).
	timeout time.Duration
	// stopTimeout releases the --timeout timer (it also ends with the run).
	stopTimeout context.CancelFunc
	// fleet lists the members of a fleet instead of the configuration's
	// cluster blocks (tests); nil in the command.
	fleet fleetSource
	// loadedFleet are the members' configurations a stack loaded with a
	// fleet's listing (keepFleet); nil: none.
	loadedFleet []*config.Config

	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	env    []string
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer, env []string) *cobra.Command {
	return newRoot(&globals{stdin: stdin, stdout: stdout, stderr: stderr, env: env})
}

// newRoot builds the command tree over g, which holds the I/O streams and
// receives the global flags.
func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "gpuform",
		Short:         "Plan and apply GPU multi-tenancy on Kubernetes",
		Long:          "gpuform reads HCL files that describe tenants, GPU pools, MIG layouts, priorities and models,\nvalidates them against the GPU catalog, and plans and applies them on a Kubernetes cluster.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version, as terraform and helm take it: what gpuform version
		// prints (cobra adds the flag only for a non-empty Version).
		Version: ver.Line(version, commit),
	}
	root.SetVersionTemplate(ver.Line(version, commit) + "\n")
	root.SetFlagErrorFunc(cliflags.FlagError)
	root.SetIn(g.stdin)
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&g.chdir, "chdir", "", "switch to directory `DIR` before doing anything else")
	pf.StringArrayVar(&g.vars, "var", nil, "set an input variable (`name=value`; repeatable)")
	pf.StringArrayVar(&g.varFiles, "var-file", nil, "read input variables from `FILE` (repeatable)")
	pf.BoolVar(&g.noColor, "no-color", false, "disable colours in the output")
	pf.StringVar(&g.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: the cluster block, $KUBECONFIG, ~/.kube/config)")
	pf.StringVar(&g.simulated, "simulated", "", "use the embedded simulated cluster described in `FILE` instead of a real one")
	pf.StringVar(&g.context, "context", "", "kubeconfig context `NAME` (default: the cluster block, the current context)")
	pf.BoolVar(&g.allowConfigKubeconfig, "allow-config-kubeconfig", false, "let the configuration's cluster block name the kubeconfig file, inside its directory (its exec plugins run); never with --base, --repo or --ref")
	pf.IntVarP(&g.verbosity, "verbosity", "v", 0, "log API requests to stderr: `N`=1 method, path, status and latency; 2 also the full URL and response size; 3 or more also headers (credentials redacted, bodies never)")
	pf.DurationVar(&g.timeout, "timeout", 0, "stop the whole run after `D` (30s, 10m): no new change starts, requests in flight get 0.5s, the lock is released (default 0: no limit; every request, retry and wait has its own bound)")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		if g.timeout > 0 {
			var ctx context.Context
			ctx, g.stopTimeout = context.WithTimeoutCause(cmd.Context(), g.timeout, &engine.RunTimeoutError{Limit: g.timeout})
			cmd.SetContext(ctx)
		}
	}
	root.AddCommand(
		newValidateCommand(g),
		newPlanCommand(g),
		newApplyCommand(g),
		newDestroyCommand(g),
		newImportCommand(g),
		newShowCommand(g),
		newRenderCommand(g),
		newDriftCommand(g),
		newForceUnlockCommand(g),
		newInventoryCommand(g),
		newAgentCommand(g),
		newFmtCommand(g),
		newCatalogCommand(g),
		newUsageCommand(g),
		newGraphCommand(g),
		newStateCommand(g),
		newVersionCommand(g),
	)
	for _, c := range root.Commands() {
		sayTimeout(c)
	}
	return root
}

// sayTimeout makes an error of c that the run's --timeout caused say so,
// unless it already does or was printed already.
func sayTimeout(c *cobra.Command) {
	run := c.RunE
	if run == nil {
		return
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		var rt *engine.RunTimeoutError
		var ee *exitError
		if err == nil || errors.As(err, &ee) || !errors.As(context.Cause(cmd.Context()), &rt) || errors.As(err, &rt) {
			return err
		}
		return fmt.Errorf("%w\ngpuform stopped: %v", err, rt)
	}
}

// dir is the configuration directory: --chdir, or the working directory.
// Relative paths on the command line (--var-file) are taken from it, as
// Terraform's -chdir does, without changing the process's directory.
func (g *globals) dir() string {
	if g.chdir == "" {
		return "."
	}
	return g.chdir
}

// path resolves a command-line path against dir().
func (g *globals) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(g.dir(), p)
}

// color reports whether output to w should carry ANSI colours: not with
// --no-color or $NO_COLOR, nor on anything but a terminal.
func (g *globals) color(w io.Writer) bool {
	return !g.noColor && !cliflags.NoColor(g.env) && textsafe.IsTerminal(w)
}

// loadOptions gathers variables from flags and the environment.
func (g *globals) loadOptions() (config.Options, hcl.Diagnostics) {
	opts := config.Options{Vars: g.vars, Env: g.env, Cluster: g.onMember}
	var diags hcl.Diagnostics
	for _, name := range g.varFiles {
		src, err := files.ReadLimited(g.path(name), config.MaxFileSize)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Failed to read variables file", Detail: err.Error() + "."})
			continue
		}
		opts.VarFiles = append(opts.VarFiles, config.VarFile{Name: name, Src: src})
	}
	return opts, diags
}

// configDiagWriter is the diagnostic writer for stderr over files.
func configDiagWriter(g *globals, files map[string]*hcl.File) *config.DiagnosticWriter {
	return &config.DiagnosticWriter{Files: files, Color: g.color(g.stderr), Width: 100}
}

// writeDiags prints diagnostics Terraform-style to stderr.
func (g *globals) writeDiags(cfg *config.Config, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	var files map[string]*hcl.File
	if cfg != nil {
		files = cfg.Files
	}
	_ = configDiagWriter(g, files).Write(g.stderr, diags)
}
