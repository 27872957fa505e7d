package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// check verifies a release that run wrote into o.out, as a user who
// downloads it would meet it: the directory holds one archive per target,
// SHA256SUMS and the SBOM, nothing else; SHA256SUMS lists every other file
// with its hash; each archive holds exactly its directory, the binary (a
// program for its target's OS and architecture) and the extra files; the
// SBOM is SPDX 2.3 JSON naming the main module at the version and every
// module any binary records, each a dependency of it; and the host's
// binary, unpacked, runs `version` and prints the version.
func check(ctx context.Context, o options) error {
	files, err := listFiles(o.out)
	if err != nil {
		return err
	}
	sbomName := "gpuform_" + o.version + ".spdx.json"
	want := []string{"SHA256SUMS", sbomName}
	for _, t := range o.targets {
		goos, goarch, _ := strings.Cut(t, "/")
		want = append(want, archiveName(o.version, goos, goarch))
	}
	sort.Strings(want)
	if !slices.Equal(keysOf(files), want) {
		return fmt.Errorf("%s holds %v, want %v", o.out, keysOf(files), want)
	}
	if err := checkSums(files); err != nil {
		return err
	}
	var hostBin []byte
	var infos []*buildinfo.BuildInfo
	for _, t := range o.targets {
		goos, goarch, _ := strings.Cut(t, "/")
		bin, err := checkArchive(o, files[archiveName(o.version, goos, goarch)], goos, goarch)
		if err != nil {
			return fmt.Errorf("%s: %w", archiveName(o.version, goos, goarch), err)
		}
		info, err := buildinfo.Read(bytes.NewReader(bin))
		if err != nil {
			return fmt.Errorf("%s: read the binary's build information: %w", archiveName(o.version, goos, goarch), err)
		}
		infos = append(infos, info)
		if t == runtime.GOOS+"/"+runtime.GOARCH {
			hostBin = bin
		}
	}
	if hostBin == nil {
		return fmt.Errorf("no archive for this machine (%s/%s) to run", runtime.GOOS, runtime.GOARCH)
	}
	if err := checkSBOM(o.version, files[sbomName], infos); err != nil {
		return fmt.Errorf("%s: %w", sbomName, err)
	}
	bin, err := writeTemp(hostBin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(bin))
	return runVersion(ctx, bin, o.version)
}

// archiveName is the name run gives one target's archive.
func archiveName(version, goos, goarch string) string {
	name := fmt.Sprintf("gpuform_%s_%s_%s", version, goos, goarch)
	if goos == "windows" {
		return name + ".zip"
	}
	return name + ".tar.gz"
}

// listFiles reads every file of dir; a directory in it is an error.
func listFiles(dir string) (map[string][]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the release: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s: %s is not a plain file", dir, e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read the release: %w", err)
		}
		out[e.Name()] = b
	}
	return out, nil
}

func keysOf(m map[string][]byte) []string {
	return slices.Sorted(maps.Keys(m))
}

// checkSums checks SHA256SUMS: one "<hash>  <name>" line for every other
// file, sorted, each hash right.
func checkSums(files map[string][]byte) error {
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(string(files["SHA256SUMS"]), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return fmt.Errorf("SHA256SUMS: line %q is not <sha256>  <name>", line)
		}
		data, found := files[name]
		h := sha256.Sum256(data)
		if !found || name == "SHA256SUMS" || hex.EncodeToString(h[:]) != sum {
			return fmt.Errorf("SHA256SUMS: line %q does not match the file %s", line, name)
		}
		names = append(names, name)
	}
	others := slices.DeleteFunc(keysOf(files), func(n string) bool { return n == "SHA256SUMS" })
	if !slices.Equal(names, others) {
		return fmt.Errorf("SHA256SUMS lists %v, want %v in that order", names, others)
	}
	return nil
}

// checkArchive checks one archive's entries and returns its binary.
func checkArchive(o options, data []byte, goos, goarch string) ([]byte, error) {
	base := fmt.Sprintf("gpuform_%s_%s_%s", o.version, goos, goarch)
	exe := "gpuform"
	if goos == "windows" {
		exe += ".exe"
	}
	want := []string{base + "/", base + "/" + exe}
	for _, f := range o.extra {
		want = append(want, base+"/"+filepath.Base(f))
	}
	sort.Strings(want[1:])
	var got map[string][]byte
	var names []string
	var err error
	if goos == "windows" {
		names, got, err = readZip(data)
	} else {
		names, got, err = readTarGz(data, base+"/"+exe)
	}
	if err != nil {
		return nil, err
	}
	if !slices.Equal(names, want) {
		return nil, fmt.Errorf("holds %v, want %v", names, want)
	}
	bin := got[base+"/"+exe]
	if err := checkExecutable(bin, goos, goarch); err != nil {
		return nil, fmt.Errorf("%s: %w", exe, err)
	}
	return bin, nil
}

// readTarGz returns a gzip'd tar's entry names in order and its files;
// the binary must be executable.
func readTarGz(data []byte, bin string) ([]string, map[string][]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	tr := tar.NewReader(gz)
	var names []string
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		names = append(names, h.Name)
		if h.Name == bin && h.Mode&0o111 != 0o111 {
			return nil, nil, fmt.Errorf("%s: mode %o, not executable", h.Name, h.Mode)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			return nil, nil, err
		}
	}
}

// readZip returns a zip's entry names in order and its files.
func readZip(data []byte) ([]string, map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, err
	}
	var names []string
	files := map[string][]byte{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		r, err := f.Open()
		if err != nil {
			return nil, nil, err
		}
		files[f.Name], err = io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return names, files, nil
}

// machines are the executable formats' machine types of each GOARCH.
var machines = map[string]struct {
	elf   elf.Machine
	macho macho.Cpu
	pe    uint16
}{
	"amd64": {elf.EM_X86_64, macho.CpuAmd64, pe.IMAGE_FILE_MACHINE_AMD64},
	"arm64": {elf.EM_AARCH64, macho.CpuArm64, pe.IMAGE_FILE_MACHINE_ARM64},
}

// checkExecutable checks that bin is a program of goos's format for goarch.
func checkExecutable(bin []byte, goos, goarch string) error {
	want, ok := machines[goarch]
	if !ok {
		return fmt.Errorf("no machine type known for %s", goarch)
	}
	r := bytes.NewReader(bin)
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return fmt.Errorf("not an ELF program: %w", err)
		}
		if f.Machine != want.elf || f.Type != elf.ET_EXEC {
			return fmt.Errorf("ELF %v %v, want an executable for %v", f.Type, f.Machine, want.elf)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return fmt.Errorf("not a Mach-O program: %w", err)
		}
		if f.Cpu != want.macho || f.Type != macho.TypeExec {
			return fmt.Errorf("Mach-O %v %v, want an executable for %v", f.Type, f.Cpu, want.macho)
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return fmt.Errorf("not a PE program: %w", err)
		}
		if f.Machine != want.pe || f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			return fmt.Errorf("PE machine %#x, characteristics %#x, want an executable for %#x", f.Machine, f.Characteristics, want.pe)
		}
	default:
		return fmt.Errorf("no executable format known for %s", goos)
	}
	return nil
}

// checkSBOM checks the SPDX document against the modules the binaries
// record: the main module at version described by the document, and each
// module any of them links, and no other, as a package it depends on, at
// its version.
func checkSBOM(version string, data []byte, infos []*buildinfo.BuildInfo) error {
	var doc spdxDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("not the SPDX JSON tools/dist writes: %w", err)
	}
	info := infos[0]
	if doc.SPDXVersion != "SPDX-2.3" || len(doc.Packages) == 0 {
		return fmt.Errorf("spdxVersion %q with %d packages, want SPDX-2.3 with gpuform's", doc.SPDXVersion, len(doc.Packages))
	}
	root := doc.Packages[0]
	if root.Name != info.Main.Path || root.VersionInfo != version {
		return fmt.Errorf("the first package is %s %s, want %s %s", root.Name, root.VersionInfo, info.Main.Path, version)
	}
	rel := map[spdxRelation]bool{}
	for _, r := range doc.Relationships {
		rel[r] = true
	}
	if !rel[spdxRelation{"SPDXRef-DOCUMENT", "DESCRIBES", root.SPDXID}] {
		return fmt.Errorf("the document does not describe %s", root.Name)
	}
	byName := map[string]spdxPackage{}
	for _, p := range doc.Packages[1:] {
		byName[p.Name] = p
	}
	deps := modules(infos...)
	if len(byName) != len(deps) {
		return fmt.Errorf("%d dependency packages, the binaries record %d modules", len(byName), len(deps))
	}
	for _, m := range deps {
		p, ok := byName[m.path]
		if !ok || p.VersionInfo != m.version || !rel[spdxRelation{root.SPDXID, "DEPENDS_ON", p.SPDXID}] {
			return fmt.Errorf("module %s %s: not a package gpuform depends on at that version", m.path, m.version)
		}
	}
	return nil
}

// writeTemp writes the host's binary to a new directory, executable.
func writeTemp(bin []byte) (string, error) {
	dir, err := os.MkdirTemp("", "gpuform-dist-check-")
	if err != nil {
		return "", fmt.Errorf("create a directory for the host binary: %w", err)
	}
	path := filepath.Join(dir, "gpuform")
	if runtime.GOOS == "windows" {
		path += ".exe"
	}
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		return "", fmt.Errorf("write the host binary: %w", err)
	}
	return path, nil
}

// runVersion runs `gpuform version` and wants the release's version in its
// output.
func runVersion(ctx context.Context, bin, version string) error {
	out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("the host archive's gpuform version: %w\n%s", err, out)
	}
	if !strings.Contains(string(out), version) {
		return fmt.Errorf("the host archive's gpuform version printed %q, without the version %s", out, version)
	}
	return nil
}
