package main

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/engine/usage"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/providers/prometheus"
)

func newUsageCommand(g *globals) *cobra.Command {
	var (
		o                                        prometheus.Options
		tokenFile, window, from, to, output, out string
		step                                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Report GPU-hours allocated, used and idle per tenant and pool, and their cost, from Prometheus",
		Long: "usage reads kube-state-metrics' and the DCGM exporter's series from Prometheus and reports, per tenant\n" +
			"and pool, the GPU-hours allocated, used and of idle quota over the window, and their cost at the pools'\n" +
			"price_per_gpu_hour (docs/usage.md). Token: --prometheus-token-file or $" + prometheus.EnvToken + ";\nbasic auth: $" + prometheus.EnvUsername + " and $" + prometheus.EnvPassword + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			write, err := render.UsageWriter(output)
			w, werr := usage.ParseWindow(window, from, to, step, time.Now())
			client, cerr := prometheus.Connect(o, g.env, tokenFile)
			if err = errors.Join(err, werr, cerr); err != nil {
				return err
			}
			opts, diags := g.loadOptions()
			cfg := &config.Config{}
			if !diags.HasErrors() {
				cfg, diags = stack.New(stack.Dir(g.dir()), nil, g.stackOptions(opts)).Validate(cmd.Context())
			}
			if diags.HasErrors() {
				g.writeDiags(cfg, diags)
				return &exitError{code: 1}
			}
			rep, err := usage.Compute(cmd.Context(), client, cfg, mig.Default(), w)
			if err != nil {
				return err
			}
			if rep.NoInput() {
				render.UsageNoInput(g.stderr, rep)
				return &exitError{code: 1}
			}
			render.UsageWarnings(g.stderr, rep)
			if out == "" {
				return write(g.stdout, rep)
			}
			return files.WriteAtomic(g.path(out), 0o644, func(w io.Writer) error { return write(w, rep) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.URL, "prometheus", "", "the Prometheus server's `URL`, e.g. http://prometheus.monitoring:9090")
	f.StringVar(&tokenFile, "prometheus-token-file", "", "send the bearer token in `FILE` (default $"+prometheus.EnvToken+")")
	f.StringVar(&o.CAFile, "prometheus-ca-file", "", "trust the CA certificates in PEM `FILE` for https, besides the system's")
	f.BoolVar(&o.InsecureSkipVerify, "insecure-skip-tls-verify", false, "accept any certificate from Prometheus (self-signed test servers only)")
	f.StringVar(&window, "window", "", "report the last `DURATION` up to --to or now (default "+usage.DefaultWindow+")")
	f.StringVar(&from, "from", "", "report from `TIME` (RFC 3339) instead of --window")
	f.StringVar(&to, "to", "", "report up to `TIME` (RFC 3339; default now)")
	f.DurationVar(&step, "step", 5*time.Minute, "the sampling interval: each sample stands for one step")
	f.StringVarP(&output, "output", "o", "text", "output format: "+strings.Join(render.UsageFormats(), ", "))
	f.StringVar(&out, "out", "", "write the report to `FILE` instead of standard output")
	return cmd
}
