package config

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// mapMeta is how Meta kept its ranges before rangeTable: a map of
// attribute ranges and a map of maps of key ranges, with Range, KeyRange
// and HasAttr answered from them. The table must answer exactly as it did.
type mapMeta struct {
	decl      hcl.Range
	ranges    map[string]hcl.Range
	keyRanges map[string]map[string]hcl.Range
}

func (m *mapMeta) Range(attr string) hcl.Range {
	if r, ok := m.ranges[attr]; ok {
		return r
	}
	return m.decl
}

func (m *mapMeta) KeyRange(attr, key string) hcl.Range {
	if r, ok := m.keyRanges[attr][key]; ok {
		return r
	}
	return m.Range(attr)
}

func (m *mapMeta) HasAttr(attr string) bool {
	_, ok := m.ranges[attr]
	return ok
}

// TestRangeTableAnswersAsMaps sets random attribute and key ranges on a
// Meta and on the maps it replaced, and checks that every Range, KeyRange,
// HasAttr and AttrRanges answer is the same: names that prefix each other,
// keys holding NUL or empty, a range in another file, fields at and past
// what a compactRange holds (and negative ones), and ranges set twice.
func TestRangeTableAnswersAsMaps(t *testing.T) {
	names := []string{"", "a", "ab", "a\x00", "labels", "labels_x", "label", "slices", "z", "\x00", "a\x00b"}
	attrs := []string{"a", "ab", "b", "labels", "labelsx", "label", "slices", "replicas", "z", "taint"}
	files := []string{"main.hcl", "main.hcl", "main.hcl", "other.hcl"}
	pos := func(r *rand.Rand) hcl.Pos {
		switch r.IntN(20) {
		case 0:
			return hcl.Pos{Line: math.MaxUint32 + 1, Column: 1, Byte: 7}
		case 1:
			return hcl.Pos{Line: 1, Column: -1, Byte: math.MaxUint32}
		case 2:
			return hcl.Pos{Line: 1<<24 - 1 + r.IntN(2), Column: math.MaxUint16 + r.IntN(2), Byte: math.MaxUint32 + r.IntN(2)}
		}
		return hcl.Pos{Line: r.IntN(300) + 1, Column: r.IntN(120) + 1, Byte: r.IntN(1 << 24)}
	}
	// end is a position after start most of the time, up to 300 lines on.
	end := func(r *rand.Rand, start hcl.Pos) hcl.Pos {
		if r.IntN(5) == 0 {
			return pos(r)
		}
		return hcl.Pos{Line: start.Line + r.IntN(300), Column: r.IntN(70000), Byte: start.Byte + r.IntN(1000)}
	}
	for seed := range uint64(1000) {
		r := rand.New(rand.NewPCG(seed, 19))
		decl := hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 1, Column: 1}, End: hcl.Pos{Line: 1, Column: 9, Byte: 8}}
		var m Meta
		m.DeclRange = decl
		var in *instances // names of their own, or shared as a load's are
		if seed%2 == 0 {
			in = newInstances()
		}
		want := mapMeta{decl: decl, ranges: map[string]hcl.Range{}, keyRanges: map[string]map[string]hcl.Range{}}
		for range r.IntN(30) {
			start := pos(r)
			rng := hcl.Range{Filename: files[r.IntN(len(files))], Start: start, End: end(r, start)}
			attr := attrs[r.IntN(len(attrs))]
			if r.IntN(2) == 0 {
				m.setRange(in, attr, rng)
				want.ranges[attr] = rng
				continue
			}
			key := names[r.IntN(len(names))]
			m.ranges.set(in.keyName(attr, key), rng)
			if want.keyRanges[attr] == nil {
				want.keyRanges[attr] = map[string]hcl.Range{}
			}
			want.keyRanges[attr][key] = rng
		}
		// Attribute names hold no NUL: that is what keeps "a"+NUL+key apart.
		for _, attr := range append(attrs, "", "ab", "labels_x", "zz") {
			if got, w := m.Range(attr), want.Range(attr); got != w {
				t.Fatalf("seed %d: Range(%q) = %v, want %v", seed, attr, got, w)
			}
			if got, w := m.HasAttr(attr), want.HasAttr(attr); got != w {
				t.Fatalf("seed %d: HasAttr(%q) = %v, want %v", seed, attr, got, w)
			}
			for _, key := range names {
				if got, w := m.KeyRange(attr, key), want.KeyRange(attr, key); got != w {
					t.Fatalf("seed %d: KeyRange(%q, %q) = %v, want %v", seed, attr, key, got, w)
				}
			}
		}
		if got := m.AttrRanges(); !reflect.DeepEqual(got, want.ranges) {
			t.Fatalf("seed %d: AttrRanges() = %v, want %v", seed, got, want.ranges)
		}
	}
}

// TestMetaRangesOfLoadedBlocks loads a configuration and checks, for each
// attribute of every block, that Range, HasAttr and KeyRange give the range
// the syntax tree has: the value's range, and for each literal key of a map
// the key through its value.
func TestMetaRangesOfLoadedBlocks(t *testing.T) {
	src := `gpuform {
  stack         = "s"
  alerts_labels = { team = "ml", "x.io/tier" = "gold" }
}

pool "a" {
  gpu           = "T4"
  node_selector = { "gpuform.dev/node-group" = "a", zone = "b" }
  time_slicing {
    replicas = 2
  }
}

tenant "t" {
  labels = { team = "t" }
  quota "a" {
    gpus            = 1
    borrowing_limit = { "nvidia.com/gpu" = 1 }
  }
}
`
	cfg, diags := LoadSources(map[string][]byte{"main.hcl": []byte(src)}, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	f := cfg.Files["main.hcl"]
	at := func(line, col, endLine, endCol int) hcl.Range {
		return hcl.Range{Filename: "main.hcl",
			Start: hcl.Pos{Line: line, Column: col, Byte: offset(f.Bytes, line, col)},
			End:   hcl.Pos{Line: endLine, Column: endCol, Byte: offset(f.Bytes, endLine, endCol)}}
	}
	p, tn := cfg.Pools[0], cfg.Tenants[0]
	q := tn.Quotas[0]
	for _, tt := range []struct {
		name      string
		got, want hcl.Range
	}{
		{"stack", cfg.Settings.Range("stack"), at(2, 19, 2, 22)},
		{"alerts_labels[team]", cfg.Settings.KeyRange("alerts_labels", "team"), at(3, 21, 3, 32)},
		{"alerts_labels[x.io/tier]", cfg.Settings.KeyRange("alerts_labels", "x.io/tier"), at(3, 34, 3, 54)},
		{"alerts_labels[none]", cfg.Settings.KeyRange("alerts_labels", "none"), at(3, 19, 3, 56)},
		{"pool gpu", p.Range("gpu"), at(7, 19, 7, 23)},
		{"node_selector[zone]", p.KeyRange("node_selector", "zone"), at(8, 53, 8, 63)},
		{"time_slicing", p.Range("time_slicing"), at(9, 3, 9, 15)},
		{"replicas", p.TimeSlicing.Range("replicas"), at(10, 16, 10, 17)},
		{"absent", p.Range("overcommit"), p.DeclRange},
		{"quota pool", q.Range("pool"), at(16, 9, 16, 12)},
		{"borrowing_limit[gpu]", q.KeyRange("borrowing_limit", "nvidia.com/gpu"), at(18, 25, 18, 45)},
		{"labels[team]", tn.KeyRange("labels", "team"), at(15, 14, 15, 24)},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %v (%d-%d), want %v (%d-%d)", tt.name, tt.got, tt.got.Start.Byte, tt.got.End.Byte, tt.want, tt.want.Start.Byte, tt.want.End.Byte)
		}
	}
	for _, tt := range []struct {
		m    *Meta
		attr string
		want bool
	}{
		{&p.Meta, "gpu", true}, {&p.Meta, "time_slicing", true}, {&p.Meta, "overcommit", false},
		{&q.Meta, "pool", true}, {&q.Meta, "slices", false}, {&tn.Meta, "quota", false},
	} {
		if got := tt.m.HasAttr(tt.attr); got != tt.want {
			t.Errorf("%s HasAttr(%q) = %v, want %v", tt.m.Address, tt.attr, got, tt.want)
		}
	}
}

// offset is the byte offset of line and column (both from 1, in bytes) in src.
func offset(src []byte, line, col int) int {
	l := 1
	for i, b := range src {
		if l == line {
			return i + col - 1
		}
		if b == '\n' {
			l++
		}
	}
	return len(src)
}
