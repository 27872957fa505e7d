//go:build linux

package hugepages

import (
	"io/fs"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the architectures
// gpuform is built for (amd64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// Advise prepares size bytes of heap address space backed by huge pages
// when Wanted: it allocates them as one untouched block (fresh address
// space the runtime knows to be zero, so nothing is written), marks the
// block's whole huge pages MADV_HUGEPAGE, and drops it, returning it to the
// kernel (debug.FreeOSMemory; the mark stays with the address space). The
// heap then grows into that space first, and each first touch of it faults
// in 2 MiB instead of 4 KiB. It returns the bytes marked, 0 when none;
// every failure leaves the heap as the runtime made it.
func Advise(fsys fs.FS, getenv func(string) string, size int) int64 {
	if !Wanted(fsys, getenv) || size < 2*hugePage {
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
	block = nil
	debug.FreeOSMemory()
	return marked
}
