package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// entry is one file of an archive.
type entry struct {
	name string
	mode int64
	data []byte
}

// archive packs the binary bin and the extra files into
// gpuform_<version>_<os>_<arch>.tar.gz (zip for windows) in o.out, under a
// directory of the same name, and returns the archive's name.
func archive(o options, bin, goos, goarch string) (string, error) {
	base := fmt.Sprintf("gpuform_%s_%s_%s", o.version, goos, goarch)
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	entries := []entry{{name: base + "/" + filepath.Base(bin), mode: 0o755, data: data}}
	for _, f := range o.extra {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		entries = append(entries, entry{name: base + "/" + filepath.Base(f), mode: 0o644, data: b})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var out bytes.Buffer
	name := base + ".tar.gz"
	if goos == "windows" {
		name = base + ".zip"
		err = writeZip(&out, o, base, entries)
	} else {
		err = writeTarGz(&out, o, base, entries)
	}
	if err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(o.out, name), out.Bytes(), 0o644)
}

// writeTarGz writes a gzip'd tar of entries: every entry owned by root
// (uid and gid 0, no names), at o.time, a directory entry first; the gzip
// header carries no name and no time.
func writeTarGz(w *bytes.Buffer, o options, dir string, entries []entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode int64, size int64, typ byte) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: o.time, Format: tar.FormatUSTAR}
	}
	if err := tw.WriteHeader(hdr(dir+"/", 0o755, 0, tar.TypeDir)); err != nil {
		return err
	}
	for _, e := range entries {
		if err := tw.WriteHeader(hdr(e.name, e.mode, int64(len(e.data)), tar.TypeReg)); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes a zip of entries, each deflated, at o.time, with Unix
// modes.
func writeZip(w *bytes.Buffer, o options, dir string, entries []entry) error {
	zw := zip.NewWriter(w)
	d := &zip.FileHeader{Name: dir + "/", Method: zip.Store, Modified: o.time}
	d.SetMode(0o755 | os.ModeDir)
	if _, err := zw.CreateHeader(d); err != nil {
		return err
	}
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: o.time}
		h.SetMode(os.FileMode(e.mode))
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
