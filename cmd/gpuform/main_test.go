package main

import (
	"bytes"
	"context"
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
	cmd.SetArgs(args)
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

// TestKeepsSmallPages checks which command lines keep the heap as the
// runtime makes it (no huge page advice): the node agent's and apply's,
// wherever their global flags stand.
func TestKeepsSmallPages(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"agent", "--node", "n1"}, true},
		{[]string{"-v", "2", "agent"}, true},
		{[]string{"--chdir", "x", "agent", "--node", "n1"}, true},
		{[]string{"apply", "--auto-approve"}, true},
		{[]string{"--chdir", "x", "apply", "x.plan"}, true},
		{[]string{"plan"}, false},
		{[]string{"drift", "--json"}, false},
		{[]string{"version"}, false},
		{nil, false},
		{[]string{"no-such-command"}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := newRootCommand(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil)
			if got := keepsSmallPages(root, tt.args); got != tt.want {
				t.Errorf("keepsSmallPages(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}
