package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// BenchmarkLoadSizeM loads a generated size-M configuration: parsing,
// decoding and evaluation, what validate does before the catalog checks.
func BenchmarkLoadSizeM(b *testing.B) {
	var o gen.Options
	for _, s := range gen.Sizes() {
		if s.Name == "M" {
			o = s.Options()
		}
	}
	dir := b.TempDir()
	if err := gen.Write(dir, o); err != nil {
		b.Fatalf("generating the size-M configuration: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(dir, gen.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, diags := LoadSources(map[string][]byte{gen.FileName: src}, Options{}); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}
