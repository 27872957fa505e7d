package kubernetes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// cutChunk is the size of the buffers listCutter reads a response into.
const cutChunk = 256 << 10

// listCutter cuts a LIST response into its parts as it is read: the
// list's metadata, and each item as the bytes it lies in, which the
// decoders scan (scanner) on other goroutines. The response is read into
// buffers of cutChunk bytes, each new and never written again once read,
// so an item is a slice of the buffer it arrived in, copied only when it
// spans two; only the list's own structure is checked here, every value
// cut is checked by the scanner.
type listCutter struct {
	r   io.Reader
	buf []byte
	// i is the cursor, n the end of what was read into buf; start is
	// where the value being cut began, -1 when none is.
	i, n, start int
	// err is the error reading ended with (io.EOF at the end).
	err error
	// bad is set when the list's structure is not JSON's.
	bad error
}

// newListCutter returns a cutter of the response read from r.
func newListCutter(r io.Reader) *listCutter {
	return &listCutter{r: r, start: -1}
}

// newBytesCutter returns a cutter of a response read whole.
func newBytesCutter(data []byte) *listCutter {
	return &listCutter{buf: data, n: len(data), start: -1, err: io.EOF}
}

// fill reads more of the response, moving the value being cut into a new
// buffer when the current one is full; false when nothing more comes.
func (c *listCutter) fill() bool {
	if c.err != nil {
		return false
	}
	if c.n == len(c.buf) {
		keep := c.i
		if c.start >= 0 {
			keep = c.start
		}
		c.move(keep)
	}
	for {
		m, err := c.r.Read(c.buf[c.n:])
		c.n += m
		if err != nil {
			c.err = err
		}
		if m > 0 || err != nil {
			return m > 0
		}
	}
}

// move starts a new buffer with what the current one holds from keep on
// (the value being cut). The old buffer is never written again: the items
// cut from it are read by the decoders until they are decoded.
func (c *listCutter) move(keep int) {
	nb := make([]byte, max(cutChunk, 2*(c.n-keep)))
	copy(nb, c.buf[keep:c.n])
	c.buf, c.n, c.i = nb, c.n-keep, c.i-keep
	if c.start >= 0 {
		c.start -= keep
	}
}

// fail records that the list is malformed.
func (c *listCutter) fail(what string) {
	if c.bad == nil {
		c.bad = errors.New(what)
	}
}

// failed returns why cutting stopped early: the read error (io.EOF
// becoming io.ErrUnexpectedEOF) or the malformed structure.
func (c *listCutter) failed() error {
	switch {
	case c.bad != nil:
		return c.bad
	case c.err == io.EOF:
		return io.ErrUnexpectedEOF
	case c.err != nil:
		return c.err
	}
	return nil
}

// peek skips whitespace and returns the next byte, false at the end.
func (c *listCutter) peek() (byte, bool) {
	for {
		for c.i < c.n {
			switch b := c.buf[c.i]; b {
			case ' ', '\t', '\n', '\r':
				c.i++
			default:
				return b, true
			}
		}
		if !c.fill() {
			return 0, false
		}
	}
}

// expect moves past b, the next byte but whitespace, or fails.
func (c *listCutter) expect(b byte) bool {
	got, ok := c.peek()
	if !ok {
		return false
	}
	if got != b {
		c.fail(fmt.Sprintf("expected %q, found %q", b, got))
		return false
	}
	c.i++
	return true
}

// cut returns the bytes of the value at the cursor, moving past it. The
// value's structure is followed (strings, nesting) but not checked.
func (c *listCutter) cut() ([]byte, bool) {
	first, ok := c.peek()
	if !ok {
		return nil, false
	}
	c.start = c.i
	defer func() { c.start = -1 }()
	depth := 0
	for {
		for c.i < c.n {
			b := c.buf[c.i]
			switch {
			case b == '"':
				if !c.skipString() {
					return nil, false
				}
				if depth == 0 {
					return c.buf[c.start:c.i], true
				}
				continue
			case b == '{' || b == '[':
				depth++
			case b == '}' || b == ']':
				if depth == 0 { // the end of a scalar
					return c.buf[c.start:c.i], true
				}
				depth--
				if depth == 0 {
					c.i++
					return c.buf[c.start:c.i], true
				}
			case depth == 0 && (b == ',' || b == ' ' || b == '\t' || b == '\n' || b == '\r'):
				if c.i == c.start {
					c.fail(fmt.Sprintf("expected a value, found %q", first))
					return nil, false
				}
				return c.buf[c.start:c.i], true
			}
			c.i++
		}
		if !c.fill() {
			if depth == 0 && c.i > c.start && c.err == io.EOF {
				return c.buf[c.start:c.i], true // a scalar ending the input
			}
			return nil, false
		}
	}
}

// skipString moves past the string at the cursor (its opening quote).
// It looks for the closing quote, then for an escape before it, each with
// bytes.IndexByte: most strings of a list are short and have no escape,
// and two single-byte searches cost less on them than one for either byte.
func (c *listCutter) skipString() bool {
	c.i++
	for {
		seg := c.buf[c.i:c.n]
		q := bytes.IndexByte(seg, '"')
		end := q
		if q < 0 {
			end = len(seg)
		}
		switch e := bytes.IndexByte(seg[:end], '\\'); {
		case e >= 0 && c.i+e+1 < c.n:
			c.i += e + 2 // an escape: the next byte is never the end
			continue
		case e >= 0:
			c.i += e // the escaped byte is still to come: read on from the escape
		case q >= 0:
			c.i += q + 1
			return true
		default:
			c.i = c.n
		}
		if !c.fill() {
			return false
		}
	}
}

// name reads the field name at the cursor.
func (c *listCutter) name() (string, bool) {
	if b, ok := c.peek(); !ok || b != '"' {
		if ok {
			c.fail(fmt.Sprintf("expected a field name, found %q", b))
		}
		return "", false
	}
	raw, ok := c.cut()
	if !ok {
		return "", false
	}
	sc := scanner{b: raw}
	name, plain := sc.str()
	sc.end()
	if sc.err != nil {
		c.fail("bad field name: " + sc.err.Error())
		return "", false
	}
	if plain {
		return string(name), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		c.fail("bad field name: " + err.Error())
		return "", false
	}
	return s, true
}

// list reads the response: each item's bytes go to item, the list's
// metadata to meta, and every other field is checked and skipped.
func (c *listCutter) list(item func([]byte), meta func([]byte) error) error {
	if !c.expect('{') {
		return c.orNotObject()
	}
	if b, ok := c.peek(); ok && b == '}' {
		c.i++
		return c.end()
	}
	for {
		key, ok := c.name()
		if !ok || !c.expect(':') {
			return c.failed()
		}
		switch key {
		case "items":
			if !c.items(item) {
				return c.failed()
			}
		default:
			raw, ok := c.cut()
			if !ok {
				return c.failed()
			}
			var err error
			if key == "metadata" {
				err = meta(raw)
			} else {
				s := scanner{b: raw}
				s.skip()
				s.end()
				err = s.err
			}
			if err != nil {
				return fmt.Errorf("list %s: %w", key, err)
			}
		}
		b, ok := c.peek()
		switch {
		case !ok:
			return c.failed()
		case b == ',':
			c.i++
		case b == '}':
			c.i++
			return c.end()
		default:
			c.fail(fmt.Sprintf("expected ',' or '}' in the list, found %q", b))
			return c.failed()
		}
	}
}

// end checks that the response ends after the list.
func (c *listCutter) end() error {
	if b, ok := c.peek(); ok {
		c.fail(fmt.Sprintf("data after the list: %q", b))
		return c.bad
	}
	if c.err != io.EOF {
		return c.err
	}
	return nil
}

// orNotObject is why a response did not start as an object.
func (c *listCutter) orNotObject() error {
	if c.bad != nil {
		return errors.New("not a JSON object")
	}
	return c.failed()
}

// items reads the list's items (an array, or null).
func (c *listCutter) items(item func([]byte)) bool {
	b, ok := c.peek()
	switch {
	case !ok:
		return false
	case b == 'n':
		raw, ok := c.cut()
		if ok && string(raw) != "null" {
			c.fail("items is neither an array nor null")
			return false
		}
		return ok
	case b != '[':
		c.fail("items is neither an array nor null")
		return false
	}
	c.i++
	if b, ok := c.peek(); !ok {
		return false
	} else if b == ']' {
		c.i++
		return true
	}
	for {
		raw, ok := c.cut()
		if !ok {
			return false
		}
		item(raw)
		b, ok := c.peek()
		switch {
		case !ok:
			return false
		case b == ',':
			c.i++
		case b == ']':
			c.i++
			return true
		default:
			c.fail(fmt.Sprintf("expected ',' or ']' in items, found %q", b))
			return false
		}
	}
}
