package kubernetes

import (
	"sync"
	"sync/atomic"
)

// chunks hands a listCutter the buffers it reads one response into, and
// takes each back once nothing reads it, for the cutter to read into again:
// a size-L refresh reads 77 MB of JSON, which, each buffer read once and
// dropped, was as many megabytes of garbage for the collector to pace
// against. A buffer comes back when the cutter has moved past it and every
// item cut from it is decoded (release): decoding copies what it keeps
// (strings, fieldsV1 outside settleStream), so no decoded object points into
// it. An item kept raw (its gate closed) holds its buffer for good.
type chunks struct {
	// size is the size of the buffers kept; larger ones (an item longer
	// than half of it) are dropped once read.
	size int
	// poison overwrites a buffer taken back (tests: a reader still in it
	// reads garbage).
	poison bool

	mu   sync.Mutex
	free [][]byte
	// reused counts the buffers handed out again (tests).
	reused int
}

// newChunks returns the buffers of one response, cutChunk each.
func newChunks() *chunks { return &chunks{size: cutChunk} }

// chunk is one buffer of a response, with its readers: the cutter while it
// reads into it, and each batch of items cut from it until decoded.
type chunk struct {
	buf  []byte
	refs atomic.Int32
	from *chunks
}

// get returns a buffer of at least n bytes, held by the caller.
func (p *chunks) get(n int) *chunk {
	c := &chunk{from: p}
	c.refs.Store(1)
	if n <= p.size {
		p.mu.Lock()
		if k := len(p.free); k > 0 {
			c.buf = p.free[k-1]
			p.free = p.free[:k-1]
			p.reused++
		}
		p.mu.Unlock()
	}
	if c.buf == nil {
		c.buf = make([]byte, max(p.size, n))
	}
	return c
}

// hold adds a reader of c.
func (c *chunk) hold() { c.refs.Add(1) }

// release drops a reader of c; the last gives its buffer back, where it is
// of the kept size.
func (c *chunk) release() {
	if c.refs.Add(-1) != 0 || len(c.buf) != c.from.size {
		return
	}
	p := c.from
	if p.poison {
		for i := range c.buf {
			c.buf[i] = 'x'
		}
	}
	p.mu.Lock()
	p.free = append(p.free, c.buf)
	p.mu.Unlock()
	c.buf = nil
}
