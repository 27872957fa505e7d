package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// checkLayout reads the image layout dir back as a runtime would (the one
// manifest of its index, named ref; the layers flattened; the files
// unpacked into a new directory) and runs the entrypoint's `version` with
// the image's environment: it must print "gpuform VERSION (". The image
// must run as the non-root user, for linux on this machine's architecture,
// with the CA bundle of the file ca.
func checkLayout(ctx context.Context, dir, ref, version, ca string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		return fmt.Errorf("read the image layout %s: %w", dir, err)
	}
	ii, err := p.ImageIndex()
	if err != nil {
		return fmt.Errorf("read the index of %s: %w", dir, err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return fmt.Errorf("read the index of %s: %w", dir, err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != ref {
		return fmt.Errorf("%s: the index holds %d images, want one named %s", dir, len(im.Manifests), ref)
	}
	img, err := ii.Image(im.Manifests[0].Digest)
	if err != nil {
		return fmt.Errorf("read the image %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("read the image's config: %w", err)
	}
	if cfg.Config.User != fmt.Sprintf("%d:%d", uid, uid) || len(cfg.Config.Entrypoint) != 1 || cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		return fmt.Errorf("config: user %q, entrypoint %q, platform %s/%s; want %d:%d, one program, linux/%s",
			cfg.Config.User, cfg.Config.Entrypoint, cfg.OS, cfg.Architecture, uid, uid, runtime.GOARCH)
	}
	root, err := os.MkdirTemp("", "gpuform-image-check-")
	if err != nil {
		return fmt.Errorf("create a directory for the image's files: %w", err)
	}
	defer os.RemoveAll(root)
	if err := unpack(mutate.Extract(img), root); err != nil {
		return fmt.Errorf("unpack the image: %w", err)
	}
	want, err := os.ReadFile(ca)
	if err != nil {
		return fmt.Errorf("read the CA bundle: %w", err)
	}
	if got, err := os.ReadFile(filepath.Join(root, caPath)); err != nil || !bytes.Equal(got, want) {
		return fmt.Errorf("the image's /%s is not %s (%v)", caPath, ca, err)
	}
	run := exec.CommandContext(ctx, filepath.Join(root, cfg.Config.Entrypoint[0]), "version")
	run.Env = cfg.Config.Env
	out, err := run.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "gpuform "+version+" (") {
		return fmt.Errorf("gpuform version from the image printed %q (%v), want gpuform %s", out, err, version)
	}
	return nil
}

// unpack writes the regular files and directories of the tar stream r
// under dir; an entry that would leave dir is an error.
func unpack(r io.ReadCloser, dir string) error {
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			return fmt.Errorf("entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode)&0o755)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
