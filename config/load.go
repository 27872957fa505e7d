package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
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
}

// VarFile is a variable definitions file given on the command line.
type VarFile struct {
	Name string
	Src  []byte
}

// Limits on what Load accepts, so that hostile input is a diagnostic and not
// an exhausted machine.
const (
	// MaxFileSize is the largest configuration, variables or file() input read.
	MaxFileSize = 16 << 20
	// MaxInstances is the most instances one for_each or count may produce.
	MaxInstances = 100_000
)

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
func LoadFS(fsys fs.FS, opts Options) (*Config, hcl.Diagnostics) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return &Config{}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read configuration directory",
			Detail:   fmt.Sprintf("Cannot list the configuration files: %s.", unwrapPathError(err)),
		}}
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
	for _, name := range configFiles {
		src, diags := readLimited(fsys, name)
		l.diags = append(l.diags, diags...)
		if src != nil {
			l.parse(name, src)
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
		src, diags := readLimited(fsys, name)
		l.diags = append(l.diags, diags...)
		if src != nil {
			varFiles = append(varFiles, VarFile{Name: name, Src: src})
		}
	}
	varFiles = append(varFiles, opts.VarFiles...)
	if l.diags.HasErrors() {
		return &Config{Files: l.files}, CleanDiagnostics(l.diags)
	}
	cfg := l.evaluate(varFiles, opts)
	cfg.Dir = "."
	cfg.Hash = hashInputs(l.files, opts)
	return cfg, CleanDiagnostics(l.diags)
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

// readLimited reads name from fsys, refusing anything that is not a regular
// file or is larger than MaxFileSize.
func readLimited(fsys fs.FS, name string) ([]byte, hcl.Diagnostics) {
	fail := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read file",
			Detail:   fmt.Sprintf("Cannot read %s: %s.", name, detail),
		}}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fail(unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fail(unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fail("not a regular file")
	}
	if st.Size() > MaxFileSize {
		return nil, fail(fmt.Sprintf("it is %d bytes, over the limit of %d", st.Size(), MaxFileSize))
	}
	buf := make([]byte, 0, st.Size()+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxFileSize {
			return nil, fail(fmt.Sprintf("it is over the limit of %d bytes", MaxFileSize))
		}
		if err != nil {
			break
		}
	}
	return buf, nil
}

// unwrapPathError drops the operation and path from a *fs.PathError, which
// the diagnostic already names.
func unwrapPathError(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// parse parses one configuration file and records its top-level blocks.
func (l *loader) parse(name string, src []byte) {
	file, diags := parseHCL(src, name)
	l.diags = append(l.diags, dropCascades(diags)...)
	if file == nil {
		return
	}
	l.files[name] = file
	if diags.HasErrors() {
		return
	}
	content, diags := file.Body.Content(l.idx.topSchema())
	l.diags = append(l.diags, diags...)
	for _, b := range content.Blocks {
		l.declare(b)
	}
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
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "file %q %d\n", n, len(files[n].Bytes))
		h.Write(files[n].Bytes)
	}
	for _, v := range opts.Vars {
		fmt.Fprintf(h, "var %q\n", v)
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
