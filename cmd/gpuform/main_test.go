package main

import (
	"bytes"
	"context"
	"github.com/gpuform/gpuform/internal/cliflags"
	"strings"
	"testing"
)

// result is what one in-process run of the gpuform command produced.
type result struct {
	stdout, stderr string
	code           int
}

// runGpuform runs the root command in-process with args and env (os.Environ
// form; nil for none) and returns its output and the exit code main would
// return. --chdir keeps the process directory untouched, so callers may run
// in parallel.
func runGpuform(t *testing.T, env []string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRootCommand(nil, &out, &errb, env)
	cmd.SetArgs(cliflags.Normalize(cmd, args)) // as main does
	// Run first: arguments are evaluated left to right, so reading the
	// buffers in the same call would see them empty.
	err := cmd.ExecuteContext(context.Background())
	return toResult(out.String(), errb.String(), err)
}

// toResult maps what a command run returned to the output and exit code
// main would produce.
func toResult(stdout, stderr string, err error) result {
	var errb strings.Builder
	errb.WriteString(stderr)
	// main prints errors that were not printed yet with exitCode.
	code := exitCode(err, &errb)
	return result{stdout: stdout, stderr: errb.String(), code: code}
}
