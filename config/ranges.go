package config

import (
	"math"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// rangeTable is where a block instance's attributes and literal map keys
// are written: what Meta.Range, KeyRange and HasAttr answer. It replaces a
// map of hcl.Range per instance and a map of maps per map-valued
// attribute (a small Go map costs some hundreds of bytes however few its
// entries): here one
// instance holds one slice of 24-byte entries, sorted by name, with the
// file named once and each name a pointer to a string the load shares.
type rangeTable struct {
	// file is the file of every entry of entries: the file of the first
	// range set.
	file string
	// entries are sorted by name: an attribute's name, or for the item of
	// a literal key of a map attribute, attr + "\x00" + key (an attribute
	// name holds no NUL, so the two never meet).
	entries []rangeEntry
	// wide holds, by the same names, the rare ranges an entry cannot:
	// those in another file or too large for a compactRange. Nil almost
	// always.
	wide map[string]hcl.Range
}

// rangeEntry is one named range: 24 bytes. name points to a string shared
// by every instance with that name (see instances.name).
type rangeEntry struct {
	name *string
	rng  compactRange
}

// compactRange is an hcl.Range without its file name in 16 bytes: the
// byte offsets, the start line with the number of lines to the end, and
// the columns. A range that does not fit (a line past 16M, a range over
// 255 lines, a column past 65535) is kept whole in rangeTable.wide.
type compactRange struct {
	startByte, endByte uint32
	// lines is the start line << 8 | the end line - the start line.
	lines            uint32
	startCol, endCol uint16
}

// keySep joins a map attribute's name and a literal key in an entry's name.
const keySep = "\x00"

// compact returns r without its file, and whether it fits.
func compact(r hcl.Range) (compactRange, bool) {
	s, e := r.Start, r.End
	if s.Byte < 0 || s.Byte > math.MaxUint32 || e.Byte < 0 || e.Byte > math.MaxUint32 ||
		s.Line < 0 || s.Line >= 1<<24 || e.Line < s.Line || e.Line-s.Line >= 1<<8 ||
		s.Column < 0 || s.Column > math.MaxUint16 || e.Column < 0 || e.Column > math.MaxUint16 {
		return compactRange{}, false
	}
	return compactRange{
		startByte: uint32(s.Byte), endByte: uint32(e.Byte),
		lines:    uint32(s.Line)<<8 | uint32(e.Line-s.Line),
		startCol: uint16(s.Column), endCol: uint16(e.Column),
	}, true
}

// expand returns c as an hcl.Range in file.
func (c compactRange) expand(file string) hcl.Range {
	line := int(c.lines >> 8)
	return hcl.Range{
		Filename: file,
		Start:    hcl.Pos{Line: line, Column: int(c.startCol), Byte: int(c.startByte)},
		End:      hcl.Pos{Line: line + int(c.lines&0xff), Column: int(c.endCol), Byte: int(c.endByte)},
	}
}

// grow makes room for n more entries, so that a block's attributes take
// one allocation of the size they need.
func (t *rangeTable) grow(n int) {
	if n > 0 && cap(t.entries)-len(t.entries) < n {
		e := make([]rangeEntry, len(t.entries), len(t.entries)+n)
		copy(e, t.entries)
		t.entries = e
	}
}

// set records r under *name, replacing what was there; name is kept.
func (t *rangeTable) set(name *string, r hcl.Range) {
	if len(t.entries) == 0 && t.wide == nil {
		t.file = r.Filename
	}
	c, fits := compact(r)
	i, found := t.search(*name, "", false)
	if !fits || r.Filename != t.file {
		if found {
			t.entries = append(t.entries[:i], t.entries[i+1:]...)
		}
		if t.wide == nil {
			t.wide = map[string]hcl.Range{}
		}
		t.wide[*name] = r
		return
	}
	delete(t.wide, *name)
	if found {
		t.entries[i].rng = c
		return
	}
	t.entries = append(t.entries, rangeEntry{})
	copy(t.entries[i+1:], t.entries[i:])
	t.entries[i] = rangeEntry{name: name, rng: c}
}

// get returns the range of attr, or of the item of key in map attribute
// attr when withKey.
func (t *rangeTable) get(attr, key string, withKey bool) (hcl.Range, bool) {
	if i, found := t.search(attr, key, withKey); found {
		return t.entries[i].rng.expand(t.file), true
	}
	if t.wide == nil {
		return hcl.Range{}, false
	}
	name := attr
	if withKey {
		name = attr + keySep + key
	}
	r, ok := t.wide[name]
	return r, ok
}

// search finds the entry named attr (or attr, keySep, key when withKey)
// without building the name, returning where it is or would go.
func (t *rangeTable) search(attr, key string, withKey bool) (int, bool) {
	i := sort.Search(len(t.entries), func(i int) bool {
		return compareName(*t.entries[i].name, attr, key, withKey) >= 0
	})
	return i, i < len(t.entries) && compareName(*t.entries[i].name, attr, key, withKey) == 0
}

// compareName compares name with attr, or with attr + keySep + key when
// withKey, as strings.Compare would.
func compareName(name, attr, key string, withKey bool) int {
	if !withKey {
		return strings.Compare(name, attr)
	}
	if len(name) <= len(attr) {
		if c := strings.Compare(name, attr[:len(name)]); c != 0 {
			return c
		}
		return -1 // a prefix of attr: shorter than attr + keySep + key
	}
	if c := strings.Compare(name[:len(attr)], attr); c != 0 {
		return c
	}
	rest := name[len(attr):]
	if rest[0] != keySep[0] {
		return 1 // any byte after attr is above NUL
	}
	return strings.Compare(rest[1:], key)
}

// attrs returns the attribute ranges by name (no key items).
func (t *rangeTable) attrs() map[string]hcl.Range {
	out := map[string]hcl.Range{}
	for _, e := range t.entries {
		if !strings.Contains(*e.name, keySep) {
			out[*e.name] = e.rng.expand(t.file)
		}
	}
	for name, r := range t.wide {
		if !strings.Contains(name, keySep) {
			out[name] = r
		}
	}
	return out
}

// setRange records the range of attribute (or nested block) attr, named
// with in's shared string (a string of its own when in is nil).
func (m *Meta) setRange(in *instances, attr string, r hcl.Range) {
	m.ranges.set(in.name(attr), r)
}

// AttrRanges returns the source range of every attribute and nested block
// written in the block, by name: a new map, which the caller may keep.
func (m *Meta) AttrRanges() map[string]hcl.Range { return m.ranges.attrs() }
