package stack

import (
	"context"
	"maps"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
)

// loaded is the Stack's configuration, validated and compiled.
type loaded struct {
	cfg     *config.Config
	desired *engine.Desired
	origin  engine.ConfigSource
	// when is when origin's commit was made (zero: unknown).
	when time.Time
}

// compileMode says how a call loads: plan-like calls report the phases'
// times; plan, apply, preview and drift drop the syntax tree once the
// configuration is valid (compiling reads only the typed model).
type compileMode struct {
	timed, dropSyntax bool
	// valid, when set, runs once the configuration is valid, before it
	// compiles (Plan connects there, so that reading the cluster overlaps
	// compiling).
	valid func(*config.Config) error
}

// planMode is how plan, apply and preview load.
func planMode() compileMode { return compileMode{timed: true, dropSyntax: true} }

// read loads and validates the configuration at ref (see Source.Read),
// returning every diagnostic; cfg is never nil. A source that cannot read
// ref is an error diagnostic.
func (s *Stack) read(ctx context.Context, ref string) (*config.Config, *Files, hcl.Diagnostics) {
	if s.src == nil {
		return &config.Config{}, &Files{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No configuration", Detail: "This stack was made without a source of configurations."}}
	}
	files, err := s.src.Read(ctx, ref)
	if err != nil {
		return &config.Config{}, &Files{Origin: engine.ConfigSource{Ref: ref}}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the configuration from git", Detail: err.Error() + "."}}
	}
	if ref == "" && s.opts.Loaded != nil && files.Dir != "" && files.Dir == s.opts.Loaded.Dir {
		// Loaded once, with the fleet: validated here as a load would be.
		cfg := s.opts.Loaded
		s.opts.Loaded = nil
		return cfg, files, compile.Validate(cfg, s.opts.Catalog)
	}
	cfg, diags := s.loadFiles(files)
	return cfg, files, diags
}

// loadFiles loads and validates one configuration's files. A fleet's
// listing read from a directory hands its members, loaded in the same
// pass, to Options.Fleet.
func (s *Stack) loadFiles(files *Files) (*config.Config, hcl.Diagnostics) {
	var cfg *config.Config
	var diags hcl.Diagnostics
	switch {
	case files.Dir != "" && s.opts.Load.Cluster == "" && s.opts.Fleet != nil:
		var members []*config.Config
		cfg, members, diags = config.LoadFleetDir(files.Dir, s.opts.Load)
		if len(members) > 0 && !diags.HasErrors() {
			// The listing shares its first member's files: its own
			// copy, so that dropping the listing's syntax leaves the
			// member's.
			cfg.Files = maps.Clone(cfg.Files)
			s.opts.Fleet(members)
		}
	case files.Dir != "":
		cfg, diags = config.LoadDir(files.Dir, s.opts.Load)
	default:
		cfg, diags = config.LoadFS(files.FS, s.opts.Load)
	}
	if diags.HasErrors() {
		return cfg, diags
	}
	return cfg, append(diags, compile.Validate(cfg, s.opts.Catalog)...)
}

// compileOpen compiles the configuration, then opens the cluster it names.
func (s *Stack) compileOpen(ctx context.Context, mode compileMode) (*loaded, Cluster, error) {
	head, err := s.compile(ctx, mode)
	if err != nil {
		return nil, nil, err
	}
	cl, err := s.open(ctx, head.cfg)
	return head, cl, err
}

// compile loads, validates and compiles the Stack's configuration, once,
// stamping the objects with its commit. Diagnostics go to
// Options.Diagnostics; errors among them end the call with an *engine.ConfigError
// before any cluster call.
func (s *Stack) compile(ctx context.Context, mode compileMode) (*loaded, error) {
	if s.head != nil {
		if mode.valid != nil {
			if err := mode.valid(s.head.cfg); err != nil {
				return nil, err
			}
		}
		return s.head, nil
	}
	start := time.Now()
	cfg, files, diags := s.read(ctx, "")
	s.report(cfg, diags)
	if diags.HasErrors() {
		return nil, &engine.ConfigError{Diags: diags}
	}
	if mode.timed {
		start = s.phase("load", start)
	}
	if mode.dropSyntax {
		// Compiling reads only the typed model: free the syntax tree
		// before the desired objects are built and the cluster's arrive.
		cfg.DropSyntax()
	}
	if mode.valid != nil {
		if err := mode.valid(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.IsFleet() {
		return nil, &FleetError{Members: cfg.Fleet}
	}
	desired, err := compile.Compile(cfg)
	if err != nil {
		return nil, err
	}
	if mode.timed {
		s.phase("compile", start)
	}
	desired.StampCommit(files.Origin.Stamp())
	s.head = &loaded{cfg: cfg, desired: desired, origin: files.Origin, when: files.Time}
	return s.head, nil
}

// Validate loads the configuration and checks it offline (syntax, types,
// references, MIG layouts, names). It returns every diagnostic, without
// passing them to Options.Diagnostics; cfg is usable only without errors.
func (s *Stack) Validate(ctx context.Context) (*config.Config, hcl.Diagnostics) {
	cfg, _, diags := s.read(ctx, "")
	return cfg, diags
}

// Compile loads, validates and compiles the configuration into the objects
// it declares, stamped with its commit. It reads no cluster.
func (s *Stack) Compile(ctx context.Context) (*engine.Desired, error) {
	head, err := s.compile(ctx, planMode())
	if err != nil {
		return nil, err
	}
	return head.desired, nil
}
