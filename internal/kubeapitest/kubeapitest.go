// Package kubeapitest runs the real kube-apiserver + etcd harness
// (testdata/kubeapi, built by `make test` into bin/kubeapi) for integration
// tests, one server per test package.
package kubeapitest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Server is a running harness.
type Server struct {
	// Dir holds the certificates, etcd data and kubeconfigs.
	Dir string
	// Kubeconfig authenticates with an admin client certificate (context "kubeapi");
	// TokenKubeconfig with a static bearer token.
	Kubeconfig      string
	TokenKubeconfig string
	// URL is the API server's https://127.0.0.1:port.
	URL string

	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Binary returns the harness binary: $KUBEAPI_BIN, else bin/kubeapi at the
// repository root.
func Binary() string {
	if b := os.Getenv("KUBEAPI_BIN"); b != "" {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bin", "kubeapi")
}

// Options choose what the harness runs besides the API server and its
// controllers.
type Options struct {
	// Workloads also runs kube-scheduler and the Job controller (kubeapi
	// --workloads): pods get bound to Nodes, Jobs get pods.
	Workloads bool
	// APIServerArgs are kube-apiserver flags given after the harness's
	// own (kubeapi -- FLAGS...), e.g. --profiling=true.
	APIServerArgs []string
}

// args is the harness's command line for data in dir.
func (o Options) args(dir string) []string {
	args := []string{"--dir", dir}
	if o.Workloads {
		args = append(args, "--workloads")
	}
	if len(o.APIServerArgs) > 0 {
		args = append(append(args, "--"), o.APIServerArgs...)
	}
	return args
}

// Start runs the harness with its data in dir (created if needed; reuse a
// dir to restart on the same data) and waits until it is ready.
func Start(dir string) (*Server, error) { return StartOptions(dir, Options{}) }

// StartOptions is Start with options.
func StartOptions(dir string, o Options) (*Server, error) {
	_ = os.Remove(filepath.Join(dir, "ready"))
	cmd, stdout, log, err := launch(Binary(), "the API server harness", "kubeapi", dir, o.args(dir)...)
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, cmd: cmd, done: make(chan struct{}), log: log,
		Kubeconfig: filepath.Join(dir, "kubeconfig"), TokenKubeconfig: filepath.Join(dir, "kubeconfig-token")}
	ready := watchReady(cmd, stdout, s.done)
	select {
	case s.URL = <-ready:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("the API server harness exited before it was ready; see %s", log.Name())
	case <-time.After(90 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("the API server harness was not ready after 90s; see %s", log.Name())
	}
}

// Stop terminates the harness with SIGTERM (SIGKILL after 20s) and waits.
func (s *Server) Stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
}

// PID is the harness process's id (API server, etcd and controllers run in
// it), for measuring what it uses.
func (s *Server) PID() int {
	if s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// RESTConfig returns the admin client configuration.
func (s *Server) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
}

// Main is a TestMain body: it starts one server for the package, exposes
// it through *srv, runs the tests and stops the server. A missing harness
// fails the package; it never skips. It installs a Warnings recorder as
// client-go's default warning handler and fails the package when any
// client of the process (gpuform's too) was warned of an unknown or
// duplicate field.
func Main(m *testing.M, srv **Server) { MainOptions(m, srv, Options{}) }

// MainOptions is Main with options.
func MainOptions(m *testing.M, srv **Server, o Options) {
	warnings := &Warnings{}
	rest.SetDefaultWarningHandler(warnings)
	dir, err := os.MkdirTemp("", "kubeapi-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := StartOptions(dir, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeapitest:", err)
		os.Exit(1)
	}
	*srv = s
	code := m.Run()
	if err := warnings.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "kubeapitest:", err)
		code = 1
	}
	s.Stop()
	if code == 0 {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Context returns a context cancelled at the end of the test.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// watchReady reads the stdout of a process started by the harness for its
// "READY <url>" line, whose URL it sends on the channel it returns, and
// closes done when the process exits.
func watchReady(cmd *exec.Cmd, stdout io.Reader, done chan struct{}) <-chan string {
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- strings.TrimSpace(url)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	return ready
}

// launch starts one of the harness's binaries (what, built by `make test`
// or `make <target>`) with its stderr in dir/harness.log, killed if the
// test process dies; it returns its stdout for watchReady.
func launch(bin, what, target, dir string, args ...string) (*exec.Cmd, io.Reader, *os.File, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, nil, nil, fmt.Errorf("%s %s is missing: run `make test` (or `make %s`) to build it: %w", what, bin, target, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	log, err := os.Create(filepath.Join(dir, "harness.log"))
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, nil, nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, nil, nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return cmd, stdout, log, nil
}
