package kubeapitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// KueueBinary returns the Kueue controller manager of the harness:
// $KUEUE_BIN, else bin/kueue at the repository root (built by `make test`
// or `make kueue` from testdata/kueue, with bin/kueue-manifests beside it).
func KueueBinary() string {
	if b := os.Getenv("KUEUE_BIN"); b != "" {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bin", "kueue")
}

// Kueue is a running Kueue controller manager.
type Kueue struct {
	// Dir holds its certificates, configuration and kueue.log.
	Dir string
	// URL is its webhook server, https://127.0.0.1:port.
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// StartKueue runs the Kueue controller manager against srv with its files
// in dir: it installs Kueue's CRDs (the module version's), registers its
// webhooks on loopback and runs its controllers and scheduler with the Job
// and pod integrations; StartKueue returns once the webhooks answer, with
// Kueue's configuration in the ConfigMap its standard install keeps it in
// (publishKueueConfig).
// flags go to testdata/kueue's command (--dra-mapping RESOURCE=CLASS).
func StartKueue(srv *Server, dir string, flags ...string) (*Kueue, error) {
	args := append([]string{"--kubeconfig", srv.Kubeconfig, "--dir", dir}, flags...)
	cmd, stdout, log, err := launch(KueueBinary(), "the Kueue controller manager", "kueue", dir, args...)
	if err != nil {
		return nil, err
	}
	k := &Kueue{Dir: dir, cmd: cmd, done: make(chan struct{}), log: log}
	ready := watchReady(cmd, stdout, k.done)
	select {
	case k.URL = <-ready:
		if err := publishKueueConfig(context.Background(), srv, dir); err != nil {
			k.Stop()
			return nil, err
		}
		return k, nil
	case <-k.done:
		return nil, fmt.Errorf("the Kueue controller manager exited before it was ready; see %s and %s", log.Name(), filepath.Join(dir, "kueue.log"))
	case <-time.After(120 * time.Second):
		k.Stop()
		return nil, fmt.Errorf("the Kueue controller manager was not ready after 120s; see %s", filepath.Join(dir, "kueue.log"))
	}
}

// Stop terminates Kueue with SIGTERM (it unregisters its webhooks; SIGKILL
// after 20s) and waits.
func (k *Kueue) Stop() {
	if k.cmd.Process == nil {
		return
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
	k.log.Close()
}

// notReadyTaints are the taints a Node has until its kubelet reports
// Ready (the TaintNodesByCondition admission plugin adds the first to
// every new Node).
var notReadyTaints = map[string]bool{"node.kubernetes.io/not-ready": true, "node.kubernetes.io/unreachable": true}

// PlayKubelet stands in for the kubelets of the simulated Nodes until ctx
// ends, every 200ms: it marks every Node Ready and removes its not-ready
// taints (so kube-scheduler binds pods to it), and finishes the graceful
// deletion of pods bound to a Node (phase Failed, then deleted with grace
// period 0), as a kubelet does once it stopped their containers. Pods it
// binds stay Pending: nothing runs them.
func PlayKubelet(ctx context.Context, cfg *rest.Config) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		readyNodes(ctx, cs)
		finishDeletions(ctx, cs)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func readyNodes(ctx context.Context, cs kubernetes.Interface) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if !notReadyTaints[t.Key] {
				taints = append(taints, t)
			}
		}
		if len(taints) != len(n.Spec.Taints) {
			n.Spec.Taints = taints
			if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
				continue
			}
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if ready {
			continue
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		now := metav1.Now()
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now,
		})
		_, _ = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{FieldManager: "kubelet"})
	}
}

func finishDeletions(ctx context.Context, cs kubernetes.Interface) {
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	zero := int64(0)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
			continue
		}
		if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			p.Status.Phase = corev1.PodFailed
			p.Status.Reason = "Terminated"
			if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
				continue
			}
		}
		_ = cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}
}
