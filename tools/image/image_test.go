package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
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
	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	ii, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil || len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "gpuform:test" {
		t.Fatalf("index: %+v, %v", im, err)
	}
	img, err := ii.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || len(cfg.Config.Entrypoint) != 1 || cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("config: user %q, entrypoint %q, platform %s/%s", cfg.Config.User, cfg.Config.Entrypoint, cfg.OS, cfg.Architecture)
	}
	root := filepath.Join(tmp, "rootfs")
	unpack(t, mutate.Extract(img), root)
	got, err := os.ReadFile(filepath.Join(root, caPath))
	if err != nil || !bytes.Equal(got, caPEM) {
		t.Errorf("CA bundle in the image: %q, %v", got, err)
	}
	run := exec.Command(filepath.Join(root, cfg.Config.Entrypoint[0]), "version")
	run.Env = cfg.Config.Env
	b, err := run.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(b), "gpuform v0.0.0-imagetest (") {
		t.Errorf("gpuform version from the image: %q, %v", b, err)
	}
}

// unpack writes the regular files and directories of the tar stream r
// under dir.
func unpack(t *testing.T, r io.ReadCloser, dir string) {
	t.Helper()
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			t.Fatalf("entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}
