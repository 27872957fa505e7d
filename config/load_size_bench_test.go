package config

import (
	"testing"

	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// BenchmarkLoadSizeM loads a generated size-M configuration: parsing,
// decoding and evaluation, what validate does before the catalog checks.
func BenchmarkLoadSizeM(b *testing.B) {
	src := sizeSource(b, "M")
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, diags := LoadSources(map[string][]byte{gen.FileName: src}, Options{}); diags.HasErrors() {
			b.Fatal(diags.Error())
		}
	}
}

// sizeSource returns the configuration testdata/gen generates for the
// benchmark size name (S, M or L).
func sizeSource(tb testing.TB, name string) []byte {
	tb.Helper()
	for _, s := range gen.Sizes() {
		if s.Name == name {
			src, err := gen.Generate(s.Options())
			if err != nil {
				tb.Fatalf("generating the size-%s configuration: %v", name, err)
			}
			return src
		}
	}
	tb.Fatalf("no benchmark size %q", name)
	return nil
}
