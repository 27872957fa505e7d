package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestCheck: check passes on a release run wrote for this platform, and
// fails on each way a release can be wrong: a checksum that does not
// match, a file SHA256SUMS does not list, an archive without a file, an
// SBOM with a module no binary links, a missing archive, a host binary
// that does not print the version.
func TestCheck(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(readme, []byte("read me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	good := options{out: filepath.Join(t.TempDir(), "dist"), version: "v0.0.1", pkg: "./testdata/hello",
		targets: []string{host}, extra: []string{readme}, time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := run(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	if err := check(context.Background(), good); err != nil {
		t.Fatalf("the release run wrote: %v", err)
	}
	hostArchive := archiveName("v0.0.1", runtime.GOOS, runtime.GOARCH)
	data, err := os.ReadFile(filepath.Join(good.out, hostArchive))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := checkArchive(good, data, runtime.GOOS, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := writeTemp(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(exe))
	if err := runVersion(context.Background(), exe, "v0.0.2"); err == nil || !strings.Contains(err.Error(), "without the version v0.0.2") {
		t.Errorf("a binary of v0.0.1 checked as v0.0.2: %v", err)
	}
	sbom := "gpuform_v0.0.1.spdx.json"
	tests := []struct {
		name  string
		spoil func(t *testing.T, dir string, o *options)
		want  string
	}{
		{"a wrong checksum", func(t *testing.T, dir string, o *options) {
			edit(t, filepath.Join(dir, "SHA256SUMS"), func(b []byte) []byte { return append([]byte("0"), b[1:]...) })
		}, "does not match"},
		{"an unlisted file", func(t *testing.T, dir string, o *options) {
			edit(t, filepath.Join(dir, "SHA256SUMS"), func(b []byte) []byte { return b[bytes.IndexByte(b, '\n')+1:] })
		}, "SHA256SUMS lists"},
		{"a stray file", func(t *testing.T, dir string, o *options) {
			write(t, filepath.Join(dir, "notes.txt"), []byte("x"))
		}, "holds"},
		{"an archive without a file", func(t *testing.T, dir string, o *options) {
			o.extra = []string{readme, filepath.Join(filepath.Dir(readme), "LICENSE")}
		}, "holds"},
		{"a module no binary links", func(t *testing.T, dir string, o *options) {
			var doc spdxDoc
			read(t, filepath.Join(dir, sbom), &doc)
			doc.Packages = append(doc.Packages, pkg("example.com/extra", "v1.0.0", "", "SPDXRef-Package-x"))
			b, _ := json.Marshal(doc)
			write(t, filepath.Join(dir, sbom), b)
			resum(t, dir)
		}, "dependency packages"},
		{"a missing target", func(t *testing.T, dir string, o *options) {
			o.targets = append(o.targets, "windows/arm64")
		}, "holds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			o.out = filepath.Join(t.TempDir(), "dist")
			if err := os.CopyFS(o.out, os.DirFS(good.out)); err != nil {
				t.Fatal(err)
			}
			tt.spoil(t, o.out, &o)
			err := check(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("check: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestCheckExecutable: a binary is taken for its own platform only.
func TestCheckExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	otherOS := map[string]string{"linux": "darwin", "darwin": "windows", "windows": "linux"}[runtime.GOOS]
	if err := checkExecutable(bin, runtime.GOOS, runtime.GOARCH); err != nil {
		t.Errorf("this test's own binary: %v", err)
	}
	for _, p := range [][2]string{{runtime.GOOS, other}, {otherOS, runtime.GOARCH}} {
		if err := checkExecutable(bin, p[0], p[1]); err == nil {
			t.Errorf("this %s/%s binary taken for %s/%s", runtime.GOOS, runtime.GOARCH, p[0], p[1])
		}
	}
}

func edit(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, f(b))
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// resum rewrites SHA256SUMS for the files of dir, as a careful forger would.
func resum(t *testing.T, dir string) {
	t.Helper()
	var names []string
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "SHA256SUMS" {
			names = append(names, e.Name())
		}
	}
	if err := writeSums(dir, names); err != nil {
		t.Fatal(err)
	}
}

// TestModulesOfEveryBinary: the SBOM's modules are those of every binary
// together, each once (the replacement where a module is replaced), sorted.
func TestModulesOfEveryBinary(t *testing.T) {
	linux := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "github.com/spf13/cobra", Version: "v1.9.1", Sum: "h1:a"},
		{Path: "github.com/prometheus/procfs", Version: "v0.16.0", Sum: "h1:b"},
		{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.0.1", Sum: "h1:c"}},
	}}
	windows := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "github.com/inconshreveable/mousetrap", Version: "v1.1.0", Sum: "h1:d"},
		{Path: "github.com/spf13/cobra", Version: "v1.9.1", Sum: "h1:a"},
	}}
	var got []string
	for _, m := range modules(linux, windows) {
		got = append(got, m.path+"@"+m.version+" "+m.sum)
	}
	want := []string{"example.com/new@v1.0.1 h1:c", "github.com/inconshreveable/mousetrap@v1.1.0 h1:d",
		"github.com/prometheus/procfs@v0.16.0 h1:b", "github.com/spf13/cobra@v1.9.1 h1:a"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("modules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
