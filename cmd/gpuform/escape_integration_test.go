//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/term"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownSGR are the escape sequences gpuform prints itself with colour on.
var ownSGR = regexp.MustCompile(`\x1b\[(0|1|2|31|32|33|1;31|1;32|1;33)m`)

// wantEscaped fails when out holds a raw control character that gpuform did
// not print itself (an ESC, a carriage return, a C1 CSI, a bidi override),
// when it does not show the hostile sequence escaped, or, with colour,
// when gpuform's own colours are gone.
func wantEscaped(t *testing.T, where, out string, color bool) {
	t.Helper()
	if i := strings.IndexAny(ownSGR.ReplaceAllString(out, ""), "\x1b\r\u009b\u202e"); i >= 0 {
		t.Errorf("%s: a raw control character reaches the terminal (byte %d):\n%q", where, i, out)
	}
	if !strings.Contains(out, `\x1b[8m`) {
		t.Errorf("%s: the escaped sequence is not shown:\n%s", where, out)
	}
	if has := ownSGR.MatchString(out); has != color {
		t.Errorf("%s: gpuform's own colours present = %v, want %v:\n%q", where, has, color, out)
	}
}

// openPTY opens a pseudo-terminal in raw mode (no newline translation):
// gpuform colours its output only on a terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	var n uint32
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("TIOCGPTN: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("TIOCSPTLCK: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal: %v", err)
	}
	if _, err := term.MakeRaw(int(s.Fd())); err != nil {
		t.Fatalf("raw mode: %v", err)
	}
	return m, s
}

// runOnTTY runs gpuform in-process with stdout and stderr on one terminal
// and returns what the terminal received and the exit code.
func runOnTTY(t *testing.T, args ...string) (string, int) {
	t.Helper()
	master, tty := openPTY(t)
	defer master.Close()
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&got, master) // ends with EIO once the terminal is closed
		close(done)
	}()
	cmd := newRoot(&globals{stdout: tty, stderr: tty})
	cmd.SetArgs(append([]string{"--kubeconfig", srv.Kubeconfig}, args...))
	err := cmd.ExecuteContext(context.Background())
	code := exitCode(err, tty)
	tty.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not drain")
	}
	return got.String(), code
}

// editConfig replaces old with new in dir's main.hcl.
func editConfig(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), old, new, 1)
	if text == string(src) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Control characters in strings (a description with ESC[8m, which hides
// the lines after it, a C1 CSI, a bidi override, a carriage return; a raw
// ESC in the source; a lease holder's name from the cluster) reach the
// terminal escaped in every text output: the plan as text and Markdown,
// diagnostics, and an error the command prints; with --no-color and with
// colour on a terminal, where gpuform's own colours stay.
func TestControlCharactersNeverReachTheTerminal(t *testing.T) {
	setupCluster(t)
	const stack = "escape"
	dir := tenantsConfig(t, stack, 1)
	editConfig(t, dir, "  value = 100\n", "  value = 100\n  description = \"tier one\"\n")
	applyOK(t, nil, dir)
	// The description changes: every output shows the new one, a line diff.
	editConfig(t, dir, `"tier one"`, `"tier one\u001b[8m\u009b8m\nwill be destroyed \u202e\r"`)
	for _, format := range []string{formatText, formatMarkdown} {
		r := runWith(t, nil, "--chdir", dir, "plan", "--format", format)
		if r.code != 0 || !strings.Contains(r.stdout, "will be destroyed") {
			t.Fatalf("plan --format %s: exit %d, want 0 showing the description\n%s%s", format, r.code, r.stdout, r.stderr)
		}
		wantEscaped(t, "plan --no-color --format "+format, r.stdout+r.stderr, false)
	}
	out, code := runOnTTY(t, "--chdir", dir, "plan")
	if code != 0 {
		t.Fatalf("plan on a terminal: exit %d\n%s", code, out)
	}
	wantEscaped(t, "plan on a terminal", out, true)
	if !strings.Contains(out, "will be destroyed") || !strings.Contains(out, "\x1b[33m~\x1b[0m") {
		t.Errorf("plan on a terminal lacks the description or the yellow ~:\n%q", out)
	}

	// A raw ESC in the source, on the line of an error: the snippet.
	editConfig(t, dir, "  value = 100\n", "  value = \"high\" # \x1b[8m\n")
	r := runWith(t, nil, "--chdir", dir, "validate")
	if r.code != 1 {
		t.Fatalf("validate: exit %d\n%s", r.code, r.stderr)
	}
	wantEscaped(t, "validate --no-color", r.stdout+r.stderr, false)
	out, code = runOnTTY(t, "--chdir", dir, "validate")
	if code != 1 {
		t.Fatalf("validate on a terminal: exit %d\n%s", code, out)
	}
	wantEscaped(t, "validate on a terminal", out, true)

	// A lease holder's name comes from the cluster: anyone who may write
	// Leases in gpuform-system chooses it.
	editConfig(t, dir, "  value = \"high\" # \x1b[8m\n", "  value = 100\n")
	holdLease(t, stack, "ci-runner\x1b[8m\u202e")
	r = runWith(t, nil, "--chdir", dir, "apply", "--auto-approve")
	if r.code != 1 || !strings.Contains(r.stderr, "held by ci-runner") {
		t.Fatalf("apply under a held lock: exit %d, want 1 naming the holder\n%s", r.code, r.stderr)
	}
	wantEscaped(t, "apply under a held lock", r.stdout+r.stderr, false)
}

// holdLease makes stack's lock Lease held by holder for an hour.
func holdLease(t *testing.T, stack, holder string) {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gpuform-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	secs := int32(3600)
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "gpuform-" + stack, Namespace: "gpuform-system", Annotations: map[string]string{"gpuform.dev/lock-id": "lock\x1b[8m"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
	}
	cur, err := cs.CoordinationV1().Leases("gpuform-system").Get(ctx, lease.Name, metav1.GetOptions{})
	if err == nil {
		lease.ResourceVersion = cur.ResourceVersion
		_, err = cs.CoordinationV1().Leases("gpuform-system").Update(ctx, lease, metav1.UpdateOptions{})
	} else if apierrors.IsNotFound(err) {
		_, err = cs.CoordinationV1().Leases("gpuform-system").Create(ctx, lease, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases("gpuform-system").Delete(context.Background(), lease.Name, metav1.DeleteOptions{})
	})
}
