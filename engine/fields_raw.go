package engine

import (
	"encoding/json"
	"strings"
)

// fieldsScanner reads a managed-fields tree (fieldsV1) in its JSON form, as
// refresh keeps gpuform's own entries (see Live), without building it: the
// diff only descends it alongside the desired object, so it costs no
// allocation unless a field gpuform owned is no longer desired.
//
// A fieldsV1 tree is objects all the way down; anything else is skipped.
// Malformed JSON ends the walk (bad), with what was found so far.
type fieldsScanner struct {
	b   string
	i   int
	bad bool
}

// collectRemoved is collectRemoved over the tree at the cursor; path holds
// the field names (unescaped) from the root.
func (s *fieldsScanner) collectRemoved(path []string, desired map[string]any, out *[][]string) {
	s.object(func(key string) {
		name, ok := fieldName(key)
		if !ok || len(path) == 1 && path[0] == "metadata" && ignoredMeta(name) {
			s.skip() // ".", or list element keys k:/v:/i: — lists are compared whole
			return
		}
		d, present := desired[name]
		if !present {
			s.collectOwned(append(path, name), out)
		} else if dm, ok := d.(map[string]any); ok {
			s.collectRemoved(append(path, name), dm, out)
		} else {
			s.skip() // a scalar or list in desired covers everything below it
		}
	})
}

// collectOwned is collectOwned over the tree at the cursor.
func (s *fieldsScanner) collectOwned(path []string, out *[][]string) {
	leaf := true
	s.object(func(key string) {
		name, ok := fieldName(key)
		if !ok {
			s.skip()
			return
		}
		leaf = false
		if len(path) == 1 && path[0] == "metadata" && ignoredMeta(name) {
			s.skip()
			return
		}
		s.collectOwned(append(path, name), out)
	})
	if leaf && len(path) > 0 && !s.bad {
		*out = append(*out, append([]string(nil), path...))
	}
}

// fieldName returns the field name of a tree key ("f:name", as the raw
// contents of a JSON string), and false for other keys.
func fieldName(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, "f:")
	if !ok {
		return "", false
	}
	if strings.IndexByte(name, '\\') >= 0 {
		var s string
		if json.Unmarshal([]byte(`"`+name+`"`), &s) != nil {
			return "", false
		}
		return s, true
	}
	return name, true
}

func (s *fieldsScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object calls member with the key (raw string contents) of every member
// of the object at the cursor; member consumes the value. A value that is
// not an object is skipped.
func (s *fieldsScanner) object(member func(key string)) {
	s.space()
	if s.bad || s.i >= len(s.b) || s.b[s.i] != '{' {
		s.skip()
		return
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return
	}
	for !s.bad {
		key := s.str()
		s.space()
		if s.bad || s.i >= len(s.b) || s.b[s.i] != ':' {
			s.bad = true
			return
		}
		s.i++
		member(key)
		s.space()
		if s.bad || s.i >= len(s.b) {
			s.bad = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.bad = true
			return
		}
	}
}

// str reads the JSON string at the cursor and returns its raw contents.
func (s *fieldsScanner) str() string {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bad = true
		return ""
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return s.b[start : s.i-1]
		}
		s.i++
	}
	s.bad = true
	return ""
}

// skip moves the cursor past the value at it.
func (s *fieldsScanner) skip() {
	s.space()
	if s.i >= len(s.b) || isDelim(s.b[s.i]) {
		s.bad = true // no value here
		return
	}
	depth := 0
	for !s.bad && s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			s.str()
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			depth--
			s.i++
		default:
			if depth == 0 { // a number, true, false or null
				for s.i < len(s.b) && !isDelim(s.b[s.i]) {
					s.i++
				}
				return
			}
			s.i++
		}
		if depth == 0 {
			return
		}
	}
}

func isDelim(c byte) bool {
	switch c {
	case ',', ':', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
