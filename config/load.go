package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	confine "github.com/gpuform/gpuform/internal/files"
)

// Options are the inputs of Load besides the configuration files.
type Options struct {
	// Vars are --var arguments in the form name=value, in command-line order.
	Vars []string
	// VarFiles are --var-file contents, in command-line order.
	VarFiles []VarFile
	// Env is the process environment (os.Environ form); GPUFORM_VAR_name
	// entries set variables.
	Env []string
	// Cluster names the fleet member to evaluate the configuration for
	// (Config.Fleet): the configuration then keeps only what is placed on
	// it. Empty for a single-cluster configuration, and to list a fleet's
	// members.
	Cluster string

	// workers bounds the goroutines that evaluate blocks: 0 is one per
	// processor once the configuration has minParallelNodes blocks, 1
	// evaluates one block at a time. Tests set it to compare the two.
	workers int
}

// VarFile is a variable definitions file given on the command line.
type VarFile struct {
	// Name is the file's name, as diagnostics show it.
	Name string
	// Src is the file's content.
	Src []byte
}

// Config file name conventions.
const (
	configSuffix   = ".hcl"
	varsSuffix     = ".vars.hcl"
	autoVarsSuffix = ".auto.vars.hcl"
	simSuffix      = ".sim.hcl"
)

// LoadDir loads the configuration in directory dir. File access, including
// the file() function, is confined to dir.
func LoadDir(dir string, opts Options) (*Config, hcl.Diagnostics) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return &Config{}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read configuration directory",
			Detail:   fmt.Sprintf("Cannot open %s: %s.", dir, unwrapPathError(err)),
		}}
	}
	defer root.Close()
	cfg, diags := LoadFS(root.FS(), opts)
	if cfg != nil {
		cfg.Dir = dir
	}
	return cfg, diags
}

// LoadFS loads the configuration at the root of fsys: every *.hcl file except
// *.vars.hcl and *.sim.hcl, plus *.auto.vars.hcl for variable values.
// The returned Config is never nil, so that its Files can render the
// diagnostics; it is complete only when diags has no errors.
//
// A fleet (named cluster blocks) is evaluated for the member
// Options.Cluster names. With Options.Cluster empty, it is evaluated for
// every member in turn, every error reported once, and the Config returned
// lists the members without being usable for planning (Config.IsFleet).
func LoadFS(fsys fs.FS, opts Options) (*Config, hcl.Diagnostics) {
	cfg, diags, l := loadFS(fsys, opts)
	if opts.Cluster != "" && l != nil {
		return withDispatchWorkers(l.parsed, opts, cfg, diags)
	}
	if opts.Cluster != "" || len(cfg.Fleet) == 0 {
		return cfg, diags
	}
	return loadFleet(l.parsed, fsys, opts, cfg, diags)
}

// loadFS is LoadFS, also returning the loader (nil when the directory
// could not be listed) for tests to look into.
func loadFS(fsys fs.FS, opts Options) (*Config, hcl.Diagnostics, *loader) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return &Config{}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read configuration directory",
			Detail:   fmt.Sprintf("Cannot list the configuration files: %s.", unwrapPathError(err)),
		}}, nil
	}
	var configFiles, autoVarFiles []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, configSuffix) {
			continue
		}
		switch {
		case strings.HasSuffix(name, autoVarsSuffix):
			autoVarFiles = append(autoVarFiles, name)
		case strings.HasSuffix(name, varsSuffix), strings.HasSuffix(name, simSuffix):
		default:
			configFiles = append(configFiles, name)
		}
	}
	sort.Strings(configFiles)
	sort.Strings(autoVarFiles)

	l := newLoader(fsys)
	l.workers = opts.workers
	// Read and check every file before parsing any, so that going over
	// MaxConfigSize costs no parsing.
	budget := newSourceBudget()
	srcs := make([][]byte, len(configFiles))
	for i, name := range configFiles {
		if budget.bytes < 0 {
			break // reported at the file that went over
		}
		src, diags := readLimited(fsys, name)
		l.diags = append(l.diags, diags...)
		if src != nil && l.checkSource(name, src, &budget, true) {
			srcs[i] = src
		}
	}
	for i, name := range configFiles {
		if srcs[i] != nil && budget.bytes >= 0 {
			l.parse(name, srcs[i])
		}
	}
	if len(configFiles) == 0 {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No configuration files",
			Detail:   "The directory holds no *.hcl configuration files. A gpuform configuration needs at least a gpuform block with the stack name.",
		})
	}
	var varFiles []VarFile
	for _, name := range autoVarFiles {
		if budget.bytes < 0 {
			break
		}
		src, diags := readLimited(fsys, name)
		l.diags = append(l.diags, diags...)
		if src != nil && l.checkSource(name, src, &budget, false) {
			varFiles = append(varFiles, VarFile{Name: name, Src: src})
		}
	}
	for _, vf := range opts.VarFiles {
		if l.checkSource(vf.Name, vf.Src, &budget, false) {
			varFiles = append(varFiles, vf)
		}
	}
	if l.diags.HasErrors() {
		return &Config{Files: l.files}, CleanDiagnostics(l.diags), l
	}
	if slices.ContainsFunc(l.clusters, func(b *hcl.Block) bool { return len(b.Labels) > 0 }) {
		// A fleet is evaluated again for its other members: keep the
		// syntax as parsed (evaluating replaces l.files' entries). A
		// single cluster's syntax is freed as it is evaluated.
		l.parsed = &parsedConfig{fsys: fsys, files: maps.Clone(l.files), diags: slices.Clone(l.diags), varFiles: varFiles}
		for i, name := range configFiles {
			if srcs[i] != nil {
				l.parsed.order = append(l.parsed.order, name)
			}
		}
	}
	cfg, ok := l.evaluate(varFiles, opts)
	if !ok {
		// The syntax was freed as the blocks were evaluated: load again,
		// one block at a time (see visitAll).
		opts.workers = 1
		return loadFS(fsys, opts)
	}
	nameBlock(l.diags, "")
	cfg.Dir = "."
	cfg.Hash = hashInputs(l.files, opts)
	return cfg, CleanDiagnostics(l.diags), l
}

// LoadSources loads a configuration from in-memory files (name -> content);
// file() reads from the same set. Used by tests and fuzzing.
func LoadSources(files map[string][]byte, opts Options) (*Config, hcl.Diagnostics) {
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: src, Mode: 0o444}
	}
	return LoadFS(fsys, opts)
}

// readLimited reads name from fsys with confine.ReadFS: a regular file of at
// most MaxFileSize bytes, as the diagnostic "Failed to read file" when not.
func readLimited(fsys fs.FS, name string) ([]byte, hcl.Diagnostics) {
	src, err := confine.ReadFS(fsys, name, MaxFileSize)
	if err == nil {
		return src, nil
	}
	return nil, hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Failed to read file",
		Detail:   fmt.Sprintf("Cannot read %s: %s.", name, unwrapPathError(err)),
	}}
}

// checkSource charges src to budget and checks it with scanSource before it
// is parsed (topBlocks: a configuration file, whose top-level blocks count
// against MaxBlocks). A file that fails is kept for the diagnostic's snippet
// and is not parsed.
func (l *loader) checkSource(name string, src []byte, budget *sourceBudget, topBlocks bool) bool {
	if budget.bytes < 0 {
		return false // reported at the file that went over
	}
	budget.bytes -= len(src)
	budget.hooks = budget.hooks[:0]
	d := scanSource(name, src, budget, topBlocks)
	if len(budget.hooks) > 0 {
		l.hookOffsets[name] = append([]int(nil), budget.hooks...)
	}
	if d == nil && budget.bytes < 0 {
		d = &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Configuration too large",
			Detail:   fmt.Sprintf("The configuration files add up to more than %d bytes (config.MaxConfigSize); gpuform stops reading at %s.", MaxConfigSize, name),
			Subject:  &hcl.Range{Filename: name, Start: hcl.InitialPos, End: hcl.InitialPos},
		}
	}
	if d == nil {
		return true
	}
	l.diags = append(l.diags, d)
	l.files[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: src, Nav: sourceNav{src}}
	return false
}

// unwrapPathError says why a file could not be read without repeating its
// name, which the diagnostic already gives.
func unwrapPathError(err error) string {
	var refused *confine.RefusedError
	if errors.As(err, &refused) {
		switch {
		case refused.Reason == confine.ErrNotRegular:
			return "not a regular file"
		case refused.Reason == confine.ErrOutside:
			return "it leads outside the configuration directory (through .. or a symbolic link)"
		case refused.Size > 0:
			return fmt.Sprintf("it is %d bytes, over the limit of %d", refused.Size, refused.Limit)
		}
		return fmt.Sprintf("it is over the limit of %d bytes", refused.Limit)
	}
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err
	}
	if err.Error() == "path escapes from parent" { // os.Root's error, not exported
		return "it leads outside the configuration directory (through .. or a symbolic link)"
	}
	return err.Error()
}

// parse parses one configuration file and records its top-level blocks.
func (l *loader) parse(name string, src []byte) {
	file, diags := parseHCL(src, name)
	l.diags = append(l.diags, capDiagnostics(dropCascades(diags), name)...)
	if file == nil {
		return
	}
	l.files[name] = file
	if diags.HasErrors() {
		return
	}
	if body, ok := file.Body.(*hclsyntax.Body); ok {
		limitExprsAt(body, l.hookOffsets[name])
	}
	content, diags := l.topContent(file.Body)
	l.diags = append(l.diags, diags...)
	for _, b := range content.Blocks {
		l.declare(b)
	}
}

// capDiagnostics keeps the first MaxFileDiagnostics of one file's syntax
// errors and counts the rest in one more diagnostic, so that a file of
// garbage does not print a million errors.
func capDiagnostics(diags hcl.Diagnostics, name string) hcl.Diagnostics {
	if len(diags) <= MaxFileDiagnostics {
		return diags
	}
	return append(diags[:MaxFileDiagnostics:MaxFileDiagnostics], &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Too many errors",
		Detail:   fmt.Sprintf("%s has %d more errors from here on, not shown (the first %d are, config.MaxFileDiagnostics).", name, len(diags)-MaxFileDiagnostics, MaxFileDiagnostics),
		Subject:  diags[MaxFileDiagnostics].Subject,
	})
}

// dropCascades removes the parser errors that only repeat a scanner error
// at the same place: an invalid character (a stray ';', single quotes, an
// invalid UTF-8 byte) is reported once, not again as "Invalid expression"
// or "Unterminated template string".
func dropCascades(diags hcl.Diagnostics) hcl.Diagnostics {
	isScanError := func(d *hcl.Diagnostic) bool {
		return d.Subject != nil && strings.HasPrefix(d.Summary, "Invalid character")
	}
	bad := map[hcl.Pos]bool{}
	for _, d := range diags {
		if isScanError(d) {
			bad[d.Subject.Start] = true
		}
	}
	out := diags[:0:0]
	for _, d := range diags {
		if d.Subject != nil && bad[d.Subject.Start] && !isScanError(d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// hashInputs is a SHA-256 over every input of a load: the files read
// (configuration and variables) and the variables given by flag or
// environment.
func hashInputs(files map[string]*hcl.File, opts Options) string {
	h := sha256.New()
	for _, n := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "file %q %d\n", n, len(files[n].Bytes))
		h.Write(files[n].Bytes)
	}
	for _, v := range opts.Vars {
		fmt.Fprintf(h, "var %q\n", v)
	}
	if opts.Cluster != "" {
		// A fleet member's configuration is not another member's: a plan
		// saved for one is refused for the other.
		fmt.Fprintf(h, "cluster %q\n", opts.Cluster)
	}
	env := make([]string, 0)
	for _, kv := range opts.Env {
		if strings.HasPrefix(kv, EnvVarPrefix) {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	for _, kv := range env {
		fmt.Fprintf(h, "env %q\n", kv)
	}
	return hex.EncodeToString(h.Sum(nil))
}
