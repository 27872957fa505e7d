package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestDistReproducible releases a small program for this platform twice,
// into two directories: every file must be the same bytes; the archive
// holds a sorted, root-owned tree at the fixed time with the binary
// executable; SHA256SUMS matches the files; the SBOM is SPDX 2.3 JSON
// describing the module. The windows zip is checked the same way on the
// binary built (cross-compiling the standard library for windows would
// cost make test minutes; make dist builds every target).
func TestDistReproducible(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(readme, []byte("read me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	host := runtime.GOOS + "/" + runtime.GOARCH
	var dirs []string
	for i := 0; i < 2; i++ {
		o := options{out: filepath.Join(t.TempDir(), "dist"), version: "v0.0.1", pkg: "./testdata/hello",
			targets: []string{host}, extra: []string{readme}, time: at}
		if err := run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, o.out)
	}
	a, b := listDir(t, dirs[0]), listDir(t, dirs[1])
	if len(a) != 3 {
		t.Fatalf("dist holds %d files, want the archive, SBOM, SHA256SUMS: %v", len(a), keys(a))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
	hostArchive := "gpuform_v0.0.1_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	checkTar(t, a[hostArchive], "gpuform_v0.0.1_"+runtime.GOOS+"_"+runtime.GOARCH, at)
	checkZip(t, zipTwice(t, readme, at), "gpuform_v0.0.1_windows_amd64", at)
	for _, line := range strings.Split(strings.TrimSpace(string(a["SHA256SUMS"])), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		h := sha256.Sum256(a[name])
		if a[name] == nil || hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS line %q does not match %s", line, name)
		}
	}
	var doc spdxDoc
	if err := json.Unmarshal(a["gpuform_v0.0.1.spdx.json"], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || len(doc.Packages) == 0 || doc.Packages[0].Name != "github.com/gpuform/gpuform" ||
		doc.Packages[0].VersionInfo != "v0.0.1" || doc.CreationInfo.Created != "2026-01-02T03:04:05Z" {
		t.Errorf("SBOM: %+v", doc)
	}
}

func listDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func checkTar(t *testing.T, data []byte, base string, at time.Time) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(at) {
			t.Errorf("%s: owner %d:%d %q:%q, time %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		if h.Name == base+"/gpuform" && h.Mode != 0o755 {
			t.Errorf("%s: mode %o, want 755", h.Name, h.Mode)
		}
	}
	want := []string{base + "/", base + "/README.md", base + "/gpuform"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("tar entries %v, want %v", names, want)
	}
}

func checkZip(t *testing.T, data []byte, base string, at time.Time) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(at) {
			t.Errorf("%s: time %v, want %v", f.Name, f.Modified, at)
		}
	}
	want := []string{base + "/", base + "/README.md", base + "/gpuform.exe"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("zip entries %v, want %v", names, want)
	}
}

// zipTwice packs a binary and readme as the windows/amd64 archive twice and
// returns it, failing when the two differ.
func zipTwice(t *testing.T, readme string, at time.Time) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gpuform.exe")
	if err := os.WriteFile(bin, []byte("MZ not really a program"), 0o700); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for i := 0; i < 2; i++ {
		o := options{out: t.TempDir(), version: "v0.0.1", extra: []string{readme}, time: at}
		name, err := archive(o, bin, "windows", "amd64")
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(o.out, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("the windows zip differs between two runs")
	}
	return out[0]
}
