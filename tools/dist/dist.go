package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// options are what run builds.
type options struct {
	out, version, pkg string
	targets           []string
	extra             []string // files added to every archive (README.md, ...)
	time              time.Time
}

// run builds every target into o.out, then SHA256SUMS and the SBOM.
func run(ctx context.Context, o options) error {
	if err := os.RemoveAll(o.out); err != nil {
		return fmt.Errorf("empty %s: %w", o.out, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.out, err)
	}
	tmp, err := os.MkdirTemp("", "gpuform-dist-")
	if err != nil {
		return fmt.Errorf("create a build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	var archives []string
	var bins []string
	for _, t := range o.targets {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok {
			return fmt.Errorf("target %q: want GOOS/GOARCH", t)
		}
		bin, err := build(ctx, o, tmp, goos, goarch)
		if err != nil {
			return err
		}
		bins = append(bins, bin)
		name, err := archive(o, bin, goos, goarch)
		if err != nil {
			return fmt.Errorf("archive %s: %w", t, err)
		}
		archives = append(archives, name)
	}
	if err := writeSBOM(o, bins, filepath.Join(o.out, "gpuform_"+o.version+".spdx.json")); err != nil {
		return err
	}
	return writeSums(o.out, append(archives, "gpuform_"+o.version+".spdx.json"))
}

// build builds the static binary of one target.
func build(ctx context.Context, o options, tmp, goos, goarch string) (string, error) {
	exe := "gpuform"
	if goos == "windows" {
		exe += ".exe"
	}
	bin := filepath.Join(tmp, goos+"_"+goarch, exe)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true",
		"-ldflags", "-s -w -buildid= -X main.version="+o.version, "-o", bin, o.pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s/%s: %w", goos, goarch, err)
	}
	return bin, nil
}

// writeSums writes SHA256SUMS: one "<sha256>  <name>" line per file, sorted
// by name, as sha256sum -c reads it.
func writeSums(dir string, names []string) error {
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return fmt.Errorf("checksum %s: %w", n, err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}
