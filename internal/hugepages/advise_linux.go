//go:build linux && (amd64 || arm64)

package hugepages

import (
	"io/fs"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Advise prepares size bytes of heap address space backed by huge pages
// when Wanted: it allocates them as one untouched block (fresh address
// space the runtime knows to be zero, so nothing is written), marks the
// block's whole huge pages MADV_HUGEPAGE, and drops it, returning it to the
// kernel (debug.FreeOSMemory; the mark stays with the address space). The
// heap then grows into that space first, and each first touch of it faults
// in 2 MiB instead of 4 KiB. It returns the bytes marked, 0 when none;
// every failure leaves the heap as the runtime made it. A process whose
// address space is limited (ulimit -v) is left alone: the block could be
// more than it may map.
func Advise(fsys fs.FS, getenv func(string) string, size int) int64 {
	if !Wanted(fsys, getenv) || size < 2*hugePage || !roomFor(size) {
		return 0
	}
	block := make([]byte, size)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	lo := (base+hugePage-1)&^(hugePage-1) - base
	hi := (base+uintptr(size))&^(hugePage-1) - base
	marked := int64(0)
	if hi > lo && unix.Madvise(block[lo:hi], unix.MADV_HUGEPAGE) == nil {
		marked = int64(hi - lo)
	}
	// block is not used past here: the collection FreeOSMemory runs frees
	// it, and the scavenging after it returns its pages to the kernel.
	debug.FreeOSMemory()
	return marked
}

// roomFor reports whether the process may map size more bytes of address
// space: no address space limit (RLIMIT_AS) is set.
func roomFor(size int) bool {
	var lim unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_AS, &lim) == nil && lim.Cur == unix.RLIM_INFINITY && size > 0
}
