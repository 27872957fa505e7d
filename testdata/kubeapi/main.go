// Command kubeapi runs a real Kubernetes control plane for tests, in one
// process, on 127.0.0.1 only:
//
//   - etcd (go.etcd.io/etcd/server/v3/embed, fsync off) on free loopback ports,
//     data in <dir>/etcd;
//   - kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver/app) with x509
//     client-certificate and static-token authentication and RBAC;
//   - once /readyz answers, the kube-controller-manager loops the API alone
//     lacks: namespace, garbage collector, resource quota, service account
//     and service account token (plus the kube-root-ca.crt publisher);
//   - with --workloads, also kube-scheduler (k8s.io/kubernetes/cmd/kube-scheduler/app,
//     default profile) and the Job controller, so that Jobs get pods and pods
//     get bound to Nodes by their capacity, labels and taints (there is still
//     no kubelet: bound pods stay Pending).
//
// Usage:
//
//	kubeapi --dir DIR [--port N] [--v N] [--log-file PATH] [--ready-timeout D] [--workloads] [-- KUBE-APISERVER-FLAGS...]
//
// On first start it creates a CA, a serving certificate, an admin client
// certificate (CN=admin, O=system:masters), a service account signing key and
// a static token for user admin in group system:masters under DIR/pki, and
// reuses them (and the etcd data) when started again on the same DIR. On
// every start it writes DIR/kubeconfig (client certificate) and
// DIR/kubeconfig-token (bearer token), both with context "kubeapi".
//
// Readiness: when the API answers /readyz and the controllers have created
// the default ServiceAccount, it writes DIR/ready (containing the server URL)
// and prints one line "READY https://127.0.0.1:PORT" on stdout. Nothing else
// is printed on stdout.
//
// SIGTERM or SIGINT stops the controllers, the apiserver and etcd, removes
// DIR/ready and exits 0. A second signal exits at once with status 1.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("kubeapi", flag.ContinueOnError)
	dirFlag := fs.String("dir", "", "directory for credentials, kubeconfigs, etcd data, logs and the ready file (required; reused across restarts)")
	port := fs.Int("port", 0, "apiserver port on 127.0.0.1 (0 = a free port)")
	verbosity := fs.Int("v", 0, "klog verbosity of the apiserver and controllers")
	logFile := fs.String("log-file", "", "apiserver and controller log (default DIR/apiserver.log; \"-\" = stderr); etcd logs to DIR/etcd.log")
	readyTimeout := fs.Duration("ready-timeout", 2*time.Minute, "give up if not ready within this time")
	workloads := fs.Bool("workloads", false, "also run kube-scheduler and the Job controller")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kubeapi --dir DIR [flags] [-- kube-apiserver flags]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *dirFlag == "" {
		fmt.Fprintln(os.Stderr, "kubeapi: --dir is required")
		return 2
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	readyFile := filepath.Join(dir, "ready")
	if err := os.Remove(readyFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if err := setupLogging(dir, *logFile, *verbosity); err != nil {
		return fail(err)
	}
	defer klog.Flush()

	start := time.Now()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	p := pki{dir: filepath.Join(dir, "pki")}
	if err := p.ensure(); err != nil {
		return fail(fmt.Errorf("credentials: %w", err))
	}

	// Hold the apiserver's port from here on, so nobody takes it meanwhile.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		return fail(err)
	}
	apiPort := ln.Addr().(*net.TCPAddr).Port
	serverURL := fmt.Sprintf("https://127.0.0.1:%d", apiPort)

	// Parse both components' flags before starting anything.
	clientPort, peerPort, err := etcdPorts(dir)
	if err != nil {
		ln.Close()
		return fail(err)
	}
	apiCtx, apiCancel := context.WithCancel(context.Background())
	defer apiCancel()
	apiOpts, err := newAPIServerOptions(apiCtx, apiserverArgs(dir, p, etcdURL(clientPort), apiPort, fs.Args()), ln)
	if err != nil {
		ln.Close()
		return fail(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	ctrls := controllers
	if *workloads {
		ctrls = append(append([]string(nil), controllers...), workloadControllers...)
	}
	kcmOpts, err := newControllerManagerOptions(controllerManagerArgs(kubeconfig, p, ctrls))
	if err != nil {
		ln.Close()
		return fail(err)
	}
	var schedOpts *schedoptions.Options
	if *workloads {
		if schedOpts, err = newSchedulerOptions(schedulerArgs(kubeconfig)); err != nil {
			ln.Close()
			return fail(err)
		}
	}
	if err := p.writeKubeconfigs(dir, serverURL); err != nil {
		ln.Close()
		return fail(err)
	}

	etcd, err := startEtcd(dir, clientPort, peerPort, filepath.Join(dir, "etcd.log"))
	if err != nil {
		ln.Close()
		return fail(err)
	}
	// From here on, stop tears down whatever has been started.
	apiDone := make(chan error, 1)
	apiStarted := false
	kcmCtx, kcmCancel := context.WithCancel(context.Background())
	kcmDone := make(chan error, 2)
	kcmStarted := false
	// The scheduler shares the controllers' context and reports on kcmDone
	// too: either stopping is fatal.
	schedStarted := false
	stop := func() {
		os.Remove(readyFile)
		go func() { // a second signal, or a hung shutdown, exits at once
			select {
			case <-sigs:
			case <-time.After(30 * time.Second):
			}
			fmt.Fprintln(os.Stderr, "kubeapi: forced exit")
			klog.Flush()
			os.Exit(1)
		}()
		kcmCancel()
		for _, started := range []bool{kcmStarted, schedStarted} {
			if !started {
				continue
			}
			select {
			case <-kcmDone:
			case <-time.After(10 * time.Second):
				klog.Warning("kubeapi: controller manager or scheduler did not stop in 10s")
			}
		}
		apiCancel()
		if apiStarted {
			<-apiDone
		} else {
			ln.Close()
		}
		etcd.Close()
		klog.Flush()
	}

	apiStarted = true
	go func() { apiDone <- runAPIServer(apiCtx, apiOpts) }()

	client, err := adminClient(p)
	if err != nil {
		stop()
		return fail(err)
	}
	deadline := time.After(*readyTimeout)
	// waitFor polls path until it answers 200, watching for failures.
	waitFor := func(path string) error {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if get(client, serverURL+path) == http.StatusOK {
				return nil
			}
			select {
			case <-tick.C:
			case err := <-apiDone:
				apiDone <- err // let stop() see it
				return fmt.Errorf("kube-apiserver exited: %v", err)
			case err := <-kcmDone:
				kcmDone <- err
				return fmt.Errorf("controllers exited: %v", err)
			case err := <-etcd.Err():
				return fmt.Errorf("etcd: %v", err)
			case s := <-sigs:
				return fmt.Errorf("got %v before ready", s)
			case <-deadline:
				return fmt.Errorf("%s not ready after %v (see %s)", path, *readyTimeout, filepath.Join(dir, "apiserver.log"))
			}
		}
	}
	if err := waitFor("/readyz"); err != nil {
		stop()
		return fail(err)
	}
	apiReady := time.Since(start)
	kcmStarted = true
	go func() { kcmDone <- runControllerManager(kcmCtx, kcmOpts) }()
	if schedOpts != nil {
		schedStarted = true
		go func() { kcmDone <- runScheduler(kcmCtx, schedOpts) }()
	}
	// The serviceaccount controller creating default/default shows the
	// controllers run (and pods in "default" pass ServiceAccount admission).
	if err := waitFor("/api/v1/namespaces/default/serviceaccounts/default"); err != nil {
		stop()
		return fail(err)
	}

	if err := writeFileAtomic(readyFile, []byte(serverURL+"\n"), 0o644); err != nil {
		stop()
		return fail(err)
	}
	klog.Infof("kubeapi: ready at %s after %v (/readyz after %v)", serverURL,
		time.Since(start).Round(time.Millisecond), apiReady.Round(time.Millisecond))
	fmt.Printf("READY %s\n", serverURL)

	code := 0
	select {
	case s := <-sigs:
		klog.Infof("kubeapi: got %v, shutting down", s)
	case err := <-apiDone:
		apiDone <- err
		fmt.Fprintf(os.Stderr, "kubeapi: kube-apiserver exited: %v\n", err)
		code = 1
	case err := <-kcmDone:
		kcmDone <- err
		fmt.Fprintf(os.Stderr, "kubeapi: controllers exited: %v\n", err)
		code = 1
	case err := <-etcd.Err():
		fmt.Fprintf(os.Stderr, "kubeapi: etcd: %v\n", err)
		code = 1
	}
	stop()
	return code
}

// setupLogging routes klog (apiserver and controllers) to path, or to stderr
// for "-", at the given verbosity.
func setupLogging(dir, path string, v int) error {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	set := func(name, value string) error { return kfs.Set(name, value) }
	if err := set("v", strconv.Itoa(v)); err != nil {
		return err
	}
	if path == "-" {
		return set("logtostderr", "true")
	}
	if path == "" {
		path = filepath.Join(dir, "apiserver.log")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	for name, value := range map[string]string{
		"logtostderr":     "false",
		"alsologtostderr": "false",
		"one_output":      "true",
		"stderrthreshold": "FATAL",
	} {
		if err := set(name, value); err != nil {
			return err
		}
	}
	klog.SetOutput(f)
	return nil
}

// adminClient is an HTTPS client that trusts our CA and presents the admin
// client certificate.
func adminClient(p pki) (*http.Client, error) {
	ca, err := os.ReadFile(p.CACert())
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no certificate", p.CACert())
	}
	cert, err := tls.LoadX509KeyPair(p.AdminCert(), p.AdminKey())
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
		},
	}, nil
}

// get returns the status code of GET url, or 0 if the request failed.
func get(c *http.Client, url string) int {
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "kubeapi: %v\n", err)
	klog.Flush()
	return 1
}
