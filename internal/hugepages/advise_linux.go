//go:build linux && (amd64 || arm64)

package hugepages

import (
	"io/fs"
	"runtime"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// probeSize is the size of each probe Advise allocates before the block.
	probeSize = 4 << 20
	// probeBudget bounds the probes' memory: what they may fault in where
	// the heap's free space was used before (a few MiB at gpuform's start).
	probeBudget = 64 << 20
	// pieceSize is the size the block is allocated in, each piece checked
	// untouched before it is marked.
	pieceSize = 64 << 20
)

// Advise prepares size bytes of heap address space backed by huge pages
// when Wanted: it allocates them as untouched memory (fresh address space
// the runtime knows to be zero, so nothing is written), marks their whole
// huge pages MADV_HUGEPAGE, and drops them, returning them to the kernel
// (debug.FreeOSMemory; the mark stays with the address space). The heap then
// grows into that space first, and each first touch of it faults in 2 MiB
// instead of 4 KiB. It returns the bytes marked, 0 when none; every failure
// leaves the heap as the runtime made it. A process whose address space is
// limited (ulimit -v) is left alone: the block could be more than it may map.
//
// The runtime zeroes a new allocation, all of it, when it takes any page
// the heap freed and has not returned to the kernel, which for a gigabyte
// taken at once would fault in a gigabyte (1% of gpuform's starts did: 1.1
// GB and 2.5 s of system time). So Advise first allocates probes until one
// is untouched (the runtime zeroed nothing of it, and the space after it is
// fresh), within probeBudget, and then the rest in pieces, each checked
// untouched (mincore) before it is marked.
func Advise(fsys fs.FS, getenv func(string) string, size int) int64 {
	if !Wanted(fsys, getenv) || size < 2*hugePage || !roomFor(size) {
		return 0
	}
	marked := advise(size)
	// What advise allocated is garbage now: the collection FreeOSMemory
	// runs frees it, and the scavenging after it returns its pages to the
	// kernel.
	debug.FreeOSMemory()
	return marked
}

// advise allocates size bytes of fresh heap space after probes (see
// Advise) and marks the whole huge pages of every run of contiguous
// untouched pieces. It holds everything it allocates until it returns, so
// each allocation takes new space.
func advise(size int) int64 {
	vec := make([]byte, pieceSize/unix.Getpagesize())
	var held [][]byte
	defer runtime.KeepAlive(&held)
	var marked int64
	var lo, hi uintptr // the run of untouched space to mark, from the probe on
	for n := 0; n < probeBudget && hi == 0; n += probeSize {
		p := make([]byte, probeSize)
		held = append(held, p)
		if untouched(p, vec) {
			lo = uintptr(unsafe.Pointer(unsafe.SliceData(p)))
			hi = lo + probeSize
		}
	}
	if hi == 0 {
		return 0
	}
	for n := probeSize; n < size; n += pieceSize {
		b := make([]byte, min(pieceSize, size-n))
		held = append(held, b)
		if !untouched(b, vec) {
			break
		}
		base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if base != hi {
			marked += mark(lo, hi)
			lo = base
		}
		hi = base + uintptr(len(b))
	}
	return marked + mark(lo, hi)
}

// mark advises huge pages for the whole huge pages in [lo, hi) and returns
// the bytes marked.
func mark(lo, hi uintptr) int64 {
	lo = (lo + hugePage - 1) &^ (hugePage - 1)
	hi &^= hugePage - 1
	if hi <= lo {
		return 0
	}
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_HUGEPAGE); errno != 0 {
		return 0
	}
	return int64(hi - lo)
}

// untouched reports whether none of b's pages is resident (mincore), vec
// holding a byte for each: the runtime did not zero b, so b lies in space
// the heap had not used before.
func untouched(b, vec []byte) bool {
	n := (len(b) + unix.Getpagesize() - 1) / unix.Getpagesize()
	if n > len(vec) {
		return false
	}
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		return false
	}
	for _, v := range vec[:n] {
		if v&1 != 0 {
			return false
		}
	}
	return true
}

// roomFor reports whether the process may map size more bytes of address
// space: no address space limit (RLIMIT_AS) is set.
func roomFor(size int) bool {
	var lim unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_AS, &lim) == nil && lim.Cur == unix.RLIM_INFINITY && size > 0
}
