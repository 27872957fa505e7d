package kubernetes

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpuform/gpuform/engine"
)

// maxScanDepth bounds the nesting of a scanned item, as json-iterator's
// (and the API server's) decoding does.
const maxScanDepth = 10000

// scanner reads one JSON value in place: a list item, cut out of its LIST
// by decodeListFrom. It builds what client-go's unstructured decoding
// builds (map[string]any, []any, string, int64 for integers, float64,
// bool, nil), through a decoder that interns strings, looking each key and
// short string up by its bytes so that one seen before costs no
// allocation. Strings with escapes, or bytes outside ASCII, are decoded by
// encoding/json, as client-go's are.
//
// A malformed value sets err and moves the cursor to the end; every read
// after that returns nothing.
type scanner struct {
	b     []byte
	i     int
	depth int
	err   error
}

func (s *scanner) fail(what string) {
	if s.err == nil {
		s.err = fmt.Errorf("%s at offset %d", what, s.i)
	}
	s.i = len(s.b)
}

// peek skips whitespace and returns the byte at the cursor, 0 at the end.
func (s *scanner) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// end checks that nothing but whitespace follows the value read.
func (s *scanner) end() {
	if s.peek(); s.i < len(s.b) {
		s.fail("data after the value")
	}
}

// str reads the string at the cursor and returns its content as it lies
// (plain: no escapes, valid UTF-8), or its quoted form to decode.
func (s *scanner) str() (raw []byte, plain bool) {
	start := s.i // at the quote
	j := start + 1
	plain = true
	ascii := true
	for ; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			if plain && (ascii || utf8.Valid(s.b[start+1:j])) {
				return s.b[start+1 : j], true
			}
			return s.b[start:s.i], false
		case c == '\\':
			plain = false
			if !validEscape(s.b[j+1:]) {
				s.i = j
				s.fail("invalid escape in string")
				return nil, false
			}
			j++
		case c < 0x20:
			s.i = j
			s.fail("control character in string")
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	s.i = j
	s.fail("unterminated string")
	return nil, false
}

// validEscape reports whether b starts with what may follow a backslash in
// a JSON string.
func validEscape(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(b) < 5 {
			return false
		}
		for _, h := range b[1:5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// key reads the field name at the cursor, interned through d.
func (s *scanner) key(d *decoder) string {
	raw, plain := s.str()
	if plain {
		return d.internKey(raw)
	}
	if s.err != nil {
		return ""
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		s.fail("bad string: " + err.Error())
		return ""
	}
	return d.intern(v)
}

// stringAny reads the string at the cursor, interned through d, as an
// interface value, boxed once per string interned.
func (s *scanner) stringAny(d *decoder) any {
	raw, plain := s.str()
	if s.err != nil {
		return ""
	}
	if plain {
		return d.internValue(raw)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		s.fail("bad string: " + err.Error())
		return ""
	}
	return d.intern(v)
}

// expect moves past c, the next byte but whitespace, or fails.
func (s *scanner) expect(c byte, what string) bool {
	if s.peek() != c {
		s.fail("expected " + what)
		return false
	}
	s.i++
	return true
}

// enter moves into an array or object, failing past maxScanDepth.
func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxScanDepth {
		s.fail("nested too deep")
		return false
	}
	s.i++
	return true
}

// first enters the object or array at the cursor (its opening byte) and
// reports whether a member follows: false when it is empty (then the
// cursor is past it) or nested too deep.
func (s *scanner) first(end byte) bool {
	if !s.enter() {
		return false
	}
	if s.peek() == end {
		s.i++
		s.depth--
		return false
	}
	return true
}

// more moves past what follows a member of an object or array: a comma
// (true: another member follows) or end (false: the cursor is past it).
func (s *scanner) more(end byte) bool {
	switch s.peek() {
	case ',':
		s.i++
		return true
	case end:
		s.i++
		s.depth--
		return false
	}
	s.fail(fmt.Sprintf("expected ',' or %q", end))
	return false
}

// member reads a field name and its colon, the name interned through d
// (not decoded when d is nil).
func (s *scanner) member(d *decoder) (string, bool) {
	if s.peek() != '"' {
		s.fail("expected a field name")
		return "", false
	}
	var key string
	if d != nil {
		key = s.key(d)
	} else {
		s.str()
	}
	return key, s.expect(':', "':' after a field name")
}

// fields calls field with each key of the object at the cursor (its
// opening brace), with the cursor at the key's value, which field reads.
// With d nil the keys are not decoded (skip).
func (s *scanner) fields(d *decoder, field func(key string)) {
	for ok := s.first('}'); ok && s.err == nil; ok = s.more('}') {
		key, ok := s.member(d)
		if !ok {
			return
		}
		field(key)
	}
}

// elements calls elem with the cursor at each element of the array at the
// cursor (its opening bracket).
func (s *scanner) elements(elem func()) {
	for ok := s.first(']'); ok && s.err == nil; ok = s.more(']') {
		elem()
	}
}

// value reads the value at the cursor as unstructured content.
func (s *scanner) value(d *decoder) any {
	switch s.peek() {
	case '{':
		m := map[string]any{}
		s.fields(d, func(key string) { m[key] = s.value(d) })
		return d.shareLeaf(m)
	case '[':
		a := []any{}
		s.elements(func() { a = append(a, s.value(d)) })
		return a
	case '"':
		return s.stringAny(d)
	case 't':
		return s.literal("true", true)
	case 'f':
		return s.literal("false", false)
	case 'n':
		return s.literal("null", nil)
	case 0:
		s.fail("unexpected end")
		return nil
	}
	return s.number()
}

// literal reads the literal word, returning v.
func (s *scanner) literal(word string, v any) any {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		s.fail("invalid literal")
		return nil
	}
	s.i += len(word)
	return v
}

// number reads a JSON number: an int64 when it is an integer that fits,
// else a float64.
func (s *scanner) number() any {
	start := s.i
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	digits := j
	j = s.digitsFrom(j)
	switch {
	case j == digits:
		s.fail("invalid value")
		return nil
	case s.b[digits] == '0' && j-digits > 1:
		s.fail("leading zero in a number")
		return nil
	}
	integer := true
	if j < len(s.b) && s.b[j] == '.' {
		integer = false
		if j = s.digitsFrom(j + 1); s.b[j-1] == '.' {
			s.i = j
			s.fail("no digits after '.'")
			return nil
		}
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		integer = false
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		if k := s.digitsFrom(j); k > j {
			j = k
		} else {
			s.i = j
			s.fail("no digits in an exponent")
			return nil
		}
	}
	s.i = j
	n := s.b[start:j]
	if integer {
		if v, ok := parseInt(n); ok {
			return v
		}
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		s.fail("bad number: " + err.Error())
		return nil
	}
	return f
}

// digitsFrom returns where the digits from j end.
func (s *scanner) digitsFrom(j int) int {
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	return j
}

// parseInt parses a JSON integer (sign and digits, checked) as an int64,
// false when it overflows.
func parseInt(n []byte) (int64, bool) {
	neg := n[0] == '-'
	if neg {
		n = n[1:]
	}
	var u uint64
	for _, c := range n {
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// skip moves past the value at the cursor, checking it.
func (s *scanner) skip() {
	switch s.peek() {
	case '{':
		s.fields(nil, func(string) { s.skip() })
	case '[':
		s.elements(s.skip)
	case '"':
		s.str()
	case 't':
		s.literal("true", nil)
	case 'f':
		s.literal("false", nil)
	case 'n':
		s.literal("null", nil)
	case 0:
		s.fail("unexpected end")
	default:
		s.number()
	}
}

// rawValue moves past the value at the cursor and returns its bytes.
func (s *scanner) rawValue() []byte {
	s.peek()
	start := s.i
	s.skip()
	return s.b[start:s.i]
}

// ownObject reads one of the stack's own objects, skipping what the diff
// never reads: its status, the managedFields entries keptEntry drops and
// unreadMetadata. The fieldsV1 of gpuform's entries stay JSON, in a
// string, which the diff walks as it reads it: built as maps they were two
// fifths of the objects' memory, a map for every field.
func (s *scanner) ownObject(d *decoder) (map[string]any, bool) {
	return s.object(d, nil, s.ownMetadata)
}

// object reads the object at the cursor (false, skipping it, for any
// other value), its metadata, where an object, with metadata and its
// status with status (nil: skipped, whatever it is; else where it is an
// object), every other field whole.
func (s *scanner) object(d *decoder, status, metadata func(*decoder) map[string]any) (map[string]any, bool) {
	if s.peek() != '{' {
		s.skip()
		return nil, false
	}
	obj := map[string]any{}
	s.fields(d, func(key string) {
		switch {
		case key == "status" && status == nil:
			s.skip()
		case key == "status" && s.peek() == '{':
			obj[key] = status(d)
		case key == "metadata" && s.peek() == '{':
			obj[key] = metadata(d)
		default:
			obj[key] = s.value(d)
		}
	})
	return obj, true
}

// ownMetadata reads the metadata of one of the stack's own objects (see
// ownObject), an object at the cursor.
func (s *scanner) ownMetadata(d *decoder) map[string]any {
	md := map[string]any{}
	s.fields(d, func(key string) {
		switch {
		case key == "managedFields" && s.peek() == '[':
			md[key] = s.ownManagedFields(d)
		case unreadMetadata(key):
			s.skip()
		default:
			md[key] = s.value(d)
		}
	})
	return md
}

// nodeObject reads a Node, which a refresh lists whole (every Node, not
// the stack's), keeping what gpuform reads of one: its metadata, with
// every managedFields entry but the fieldsV1 of gpuform's field managers
// only (nodeMetadata), its spec (the taints), and of its status the
// capacity and allocatable resources. The rest of the status a kubelet
// reports (conditions, addresses, nodeInfo, up to 50 container images,
// volumes) and the other managers' field sets (the kubelet's covers that
// status) are most of a real Node's JSON, and nothing reads them, so a
// refresh of many GPU nodes keeps a small part of what a kubelet reports.
func (s *scanner) nodeObject(d *decoder) (map[string]any, bool) {
	return s.object(d, s.nodeStatus, s.nodeMetadata)
}

// nodeStatus reads a Node's status (see nodeObject), an object at the
// cursor: its capacity and allocatable.
func (s *scanner) nodeStatus(d *decoder) map[string]any {
	status := map[string]any{}
	s.fields(d, func(key string) {
		if key == "capacity" || key == "allocatable" {
			status[key] = s.value(d)
			return
		}
		s.skip()
	})
	return status
}

// nodeMetadata reads a Node's metadata (see nodeObject), an object at the
// cursor.
func (s *scanner) nodeMetadata(d *decoder) map[string]any {
	md := map[string]any{}
	s.fields(d, func(key string) {
		if key != "managedFields" || s.peek() != '[' {
			md[key] = s.value(d)
			return
		}
		entries := []any{}
		s.elements(func() {
			if s.peek() != '{' {
				entries = append(entries, s.value(d))
				return
			}
			e := map[string]any{}
			var fields []byte
			s.fields(d, func(key string) {
				if key == "fieldsV1" {
					// The manager may come after it: JSON promises no
					// order (a custom resource's entries are written in
					// name order, a Node's in its Go type's).
					fields = s.rawValue()
					return
				}
				e[key] = s.value(d)
			})
			// Built as maps, not kept as JSON as the stack's own objects'
			// are: the diff reads another stack's through
			// GetManagedFields, which copies JSON values only.
			if manager, _ := e["manager"].(string); fields != nil && strings.HasPrefix(manager, engine.FieldManager) {
				sub := scanner{b: fields, depth: s.depth}
				e["fieldsV1"] = sub.value(d)
				if sub.end(); sub.err != nil {
					s.fail("fieldsV1: " + sub.err.Error())
				}
			}
			entries = append(entries, e)
		})
		md[key] = entries
	})
	return md
}

// ownManagedFields reads a managedFields list, keeping the entries
// keptEntry keeps, each fieldsV1 as its JSON in a string (see
// engine.Live), without the time and type of the entry, which nothing
// reads.
func (s *scanner) ownManagedFields(d *decoder) []any {
	kept := make([]any, 0, 1)
	s.elements(func() {
		if s.peek() != '{' {
			s.skip()
			return
		}
		e := make(map[string]any, 4)
		s.fields(d, func(key string) {
			switch {
			case key == "fieldsV1" && s.peek() == '{':
				e[key] = d.fieldSet(s.rawValue())
			case key == "time" || key == "fieldsType":
				s.skip()
			default:
				e[key] = s.value(d)
			}
		})
		if keptEntry(e, d.others) {
			kept = append(kept, e)
		}
	})
	return kept
}

// keptEntry reports whether ownManagedFields keeps the managedFields entry
// e: field manager gpuform's, and with others (the items of a kind gpuform
// owns whole, whose diff reads them: engine.ForeignPaths) every other
// manager's but the status subresource's (a controller's report, such as
// the quota controller's on every ResourceQuota).
func keptEntry(e map[string]any, others bool) bool {
	return e["manager"] == engine.FieldManager || others && e["subresource"] != "status"
}
