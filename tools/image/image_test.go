package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestImageRunsGpuform builds gpuform static (CGO_ENABLED=0) for this
// machine's architecture, puts it in an OCI image layout twice (the same
// bytes both times), then reads the image back as a runtime would: the
// manifest from the layout's index, the layers flattened, the files
// unpacked; the binary at the entrypoint runs `gpuform version` and says
// the version it was built with, and the CA bundle is the one given.
func TestImageRunsGpuform(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Fatalf("the test runs the linux binary it puts in the image, which %s cannot: run make test on linux", runtime.GOOS)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "gpuform")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v0.0.0-imagetest", "-o", bin, "github.com/gpuform/gpuform/cmd/gpuform")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build gpuform: %v\n%s", err, out)
	}
	ca := filepath.Join(tmp, "ca.pem")
	caPEM := []byte("-----BEGIN CERTIFICATE-----\ntest bundle\n-----END CERTIFICATE-----\n")
	if err := os.WriteFile(ca, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var digests []string
	var out string
	for i := 0; i < 2; i++ {
		out = filepath.Join(tmp, "layout", string(rune('a'+i)))
		if err := writeLayout(options{binary: bin, ca: ca, out: out, ref: "gpuform:test", arch: runtime.GOARCH, time: at}); err != nil {
			t.Fatal(err)
		}
		idx, err := os.ReadFile(filepath.Join(out, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, string(idx))
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the image differ:\n%s\n%s", digests[0], digests[1])
	}
	if err := checkLayout(context.Background(), out, "gpuform:test", "v0.0.0-imagetest", ca); err != nil {
		t.Error(err)
	}
	// The check can fail: another version, another name, another CA bundle.
	for _, bad := range [][3]string{{"gpuform:test", "v0.0.0-other", ca}, {"gpuform:other", "v0.0.0-imagetest", ca}, {"gpuform:test", "v0.0.0-imagetest", bin}} {
		if err := checkLayout(context.Background(), out, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("checkLayout(%q, %q, %q) passed", bad[0], bad[1], bad[2])
		}
	}
}
