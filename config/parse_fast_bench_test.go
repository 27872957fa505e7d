package config

import (
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// BenchmarkParseSizeM parses a generated size-M configuration chunk by chunk
// on one goroutine, with hclsyntax and with the fast path (which falls back
// to hclsyntax chunk by chunk), and whole with parseHCL (chunks in parallel).
func BenchmarkParseSizeM(b *testing.B) {
	src := sizeSource(b, "M")
	chunks := splitChunks(src)
	fast := 0
	for _, c := range chunks {
		if _, ok := parseFast(src[c.start:c.end], "main.hcl", c.pos); ok {
			fast++
		}
	}
	b.Run("hclsyntax", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			for _, c := range chunks {
				if _, diags := hclsyntax.ParseConfig(src[c.start:c.end], "main.hcl", c.pos); diags.HasErrors() {
					b.Fatal(diags.Error())
				}
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			for _, c := range chunks {
				if _, ok := parseChunk(src[c.start:c.end], "main.hcl", c.pos); !ok {
					b.Fatal("chunk rejected")
				}
			}
		}
		b.ReportMetric(100*float64(fast)/float64(len(chunks)), "%fast")
	})
	b.Run("parseHCL", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, diags := parseHCL(src, "main.hcl"); diags.HasErrors() {
				b.Fatal(diags.Error())
			}
		}
	})
}
