package config

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// StringRange maps the bytes [start, end) of a string value back into the
// source of the expression at rng that gave it (an argument's range, see
// Meta.Range): a quoted string literal ("...", escapes included) or a
// heredoc (<<EOT). An expression of any other kind (an interpolation, a
// reference, an indented heredoc) gives rng itself: a diagnostic then points
// at the whole argument, never at the wrong character.
func (c *Config) StringRange(rng hcl.Range, start, end int) hcl.Range {
	f := c.Files[rng.Filename]
	if f == nil || rng.Start.Byte < 0 || rng.End.Byte > len(f.Bytes) || rng.Start.Byte >= rng.End.Byte || start < 0 || end < start {
		return rng
	}
	offsets, ok := stringOffsets(f.Bytes[rng.Start.Byte:rng.End.Byte])
	if !ok || end >= len(offsets) {
		return rng
	}
	// offsets[i] is the source offset (within rng) of the value's byte i,
	// offsets[len(value)] that of the closing delimiter.
	from, to := offsets[start], offsets[end]
	if to <= from {
		to = from + 1
	}
	src := f.Bytes[rng.Start.Byte:rng.End.Byte]
	to = min(to, len(src))
	return hcl.Range{Filename: rng.Filename, Start: advanceColumns(rng.Start, src[:from]), End: advanceColumns(rng.Start, src[:to])}
}

// stringOffsets decodes a quoted string or a plain heredoc template and
// returns, for each byte of its value and one past its end, the offset in
// src of the source character that gave it; false for any other expression.
func stringOffsets(src []byte) ([]int, bool) {
	switch {
	case len(src) >= 2 && src[0] == '"' && src[len(src)-1] == '"':
		return templateOffsets(src, 1, len(src)-1, true)
	case bytes.HasPrefix(src, []byte("<<")) && !bytes.HasPrefix(src, []byte("<<-")):
		nl := bytes.IndexByte(src, '\n')
		if nl < 0 {
			return nil, false
		}
		// The closing marker is the last line; the value ends with the
		// newline before it.
		last := bytes.LastIndexByte(bytes.TrimRight(src, " \t\r\n"), '\n')
		if last < nl {
			return nil, false
		}
		return templateOffsets(src, nl+1, last+1, false)
	}
	return nil, false
}

// templateOffsets walks src[from:to], a template without interpolations,
// decoding the escapes of a quoted string when quoted.
func templateOffsets(src []byte, from, to int, quoted bool) ([]int, bool) {
	var offs []int
	for i := from; i < to; {
		switch {
		case (src[i] == '$' || src[i] == '%') && i+2 < to && src[i+1] == src[i] && src[i+2] == '{':
			offs = append(offs, i, i+2) // $${ is a literal ${
			i += 3
		case (src[i] == '$' || src[i] == '%') && i+1 < to && src[i+1] == '{':
			return nil, false // an interpolation or a directive
		case quoted && src[i] == '\\' && i+1 < to:
			n, size := escape(src[i:to])
			if n < 0 {
				return nil, false
			}
			for range n {
				offs = append(offs, i)
			}
			i += size
		default:
			offs = append(offs, i)
			i++
		}
	}
	return append(offs, to), true
}

// escape returns how many bytes of value the escape sequence at the start
// of s gives and how many source bytes it spans; -1 when it is not one.
func escape(s []byte) (int, int) {
	switch s[1] {
	case 'n', 'r', 't', '"', '\\':
		return 1, 2
	case 'u', 'U':
		size := 6
		if s[1] == 'U' {
			size = 10
		}
		if len(s) < size {
			return -1, 0
		}
		r, err := strconv.ParseUint(string(s[2:size]), 16, 32)
		if err != nil {
			return -1, 0
		}
		return utf8.RuneLen(rune(r)), size
	}
	return -1, 0
}

// advanceColumns is pos moved past src: lines and columns (in characters).
func advanceColumns(pos hcl.Pos, src []byte) hcl.Pos {
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		pos.Byte += size
		if r == '\n' {
			pos.Line++
			pos.Column = 1
		} else {
			pos.Column++
		}
		src = src[size:]
	}
	return pos
}
