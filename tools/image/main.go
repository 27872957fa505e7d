// Command image builds gpuform's container image as an OCI image layout,
// with no container daemon and no registry: an empty base plus one layer
// holding the static gpuform binary (CGO_ENABLED=0), a CA bundle (for TLS
// to the Kubernetes API and git remotes) and an /etc/passwd naming the
// non-root user it runs as. It uses go-containerregistry, offline: nothing
// is pulled. make image runs it; docs/install.md says how to load or push
// the result (skopeo, crane, podman).
//
// The image is reproducible: every entry and the image's creation time are
// the one time given (-epoch, default $SOURCE_DATE_EPOCH).
//
// It is a module of its own so that go-containerregistry is no dependency
// of gpuform's.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// options are what build makes.
type options struct {
	binary, ca, out, ref, arch string
	time                       time.Time
}

// The paths inside the image.
const (
	binPath = "usr/local/bin/gpuform"
	caPath  = "etc/ssl/certs/ca-certificates.crt"
	uid     = 65532 // "nonroot", as distroless images name it
)

func main() {
	var o options
	var epoch int64
	var check, version string
	flag.StringVar(&o.binary, "binary", "", "the static linux gpuform `FILE` (CGO_ENABLED=0)")
	flag.StringVar(&o.ca, "ca", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle `FILE` (PEM) to put in the image")
	flag.StringVar(&o.out, "out", "dist/image", "the OCI image layout `DIR` to write (emptied first)")
	flag.StringVar(&o.ref, "ref", "gpuform:dev", "the image's reference name in the layout (org.opencontainers.image.ref.name)")
	flag.StringVar(&o.arch, "arch", "amd64", "the binary's `GOARCH`")
	flag.Int64Var(&epoch, "epoch", 0, "the image's time in `SECONDS` since 1970 (default $SOURCE_DATE_EPOCH, else 2000-01-01)")
	flag.StringVar(&check, "check", "", "check the image layout `DIR` instead of building one: read it back, unpack it, run its gpuform version (with -ref, -ca, -version)")
	flag.StringVar(&version, "version", "", "with -check: the `VERSION` the image's gpuform must print")
	flag.Parse()
	if check != "" {
		if err := checkLayout(context.Background(), check, o.ref, version, o.ca); err != nil {
			fmt.Fprintln(os.Stderr, "image:", err)
			os.Exit(1)
		}
		return
	}
	if epoch == 0 {
		epoch, _ = strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	}
	if epoch == 0 {
		epoch = 946684800
	}
	o.time = time.Unix(epoch, 0).UTC()
	if o.binary == "" {
		fmt.Fprintln(os.Stderr, "image: -binary is required")
		os.Exit(2)
	}
	if err := writeLayout(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// writeLayout writes the OCI image layout.
func writeLayout(o options) error {
	img, err := image(o)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return fmt.Errorf("empty %s: %w", o.out, err)
	}
	p, err := layout.Write(o.out, empty.Index)
	if err != nil {
		return fmt.Errorf("create the image layout %s: %w", o.out, err)
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.ref}))
}

// image is the gpuform image: one layer on an empty base.
func image(o options) (v1.Image, error) {
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	ca, err := os.ReadFile(o.ca)
	if err != nil {
		return nil, fmt.Errorf("read the CA bundle: %w", err)
	}
	data, err := layerTar(o.time, bin, ca)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("make the layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, fmt.Errorf("add the layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", o.arch
	cfg.Created = v1.Time{Time: o.time}
	cfg.Config = v1.Config{
		Entrypoint: []string{"/" + binPath},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: "/work",
		Env:        []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=/" + caPath, "HOME=/home/nonroot"},
		Labels:     map[string]string{"org.opencontainers.image.source": "https://github.com/gpuform/gpuform"},
	}
	cfg.History = []v1.History{{Created: v1.Time{Time: o.time}, CreatedBy: "gpuform tools/image: gpuform, CA bundle, /etc/passwd"}}
	return mutate.ConfigFile(img, cfg)
}

// layerTar is the layer: directories first, then files, sorted, root-owned
// except the user's home and working directories, at t.
func layerTar(t time.Time, bin, ca []byte) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, uid)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	type ent struct {
		name string
		mode int64
		data []byte
		dir  bool
		own  int
	}
	ents := []ent{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: caPath, mode: 0o644, data: ca},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true, own: uid},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: binPath, mode: 0o755, data: bin},
		{name: "work/", mode: 0o755, dir: true, own: uid},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: t, Uid: e.own, Gid: e.own, Typeflag: tar.TypeReg, Size: int64(len(e.data)), Format: tar.FormatUSTAR}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
