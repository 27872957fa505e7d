// Package hugepages asks Linux to back the Go heap of a gpuform process with
// transparent huge pages (2 MiB) where the system leaves that to each
// program (transparent_hugepage "madvise", the default of Ubuntu and of
// GitHub's runners), as it does for every program where it is "always".
//
// A plan or drift builds and drops a heap of hundreds of MiB in a second:
// with 4 KiB pages that is one page fault per 4 KiB first touched and a TLB
// miss for most pointers followed. The Go runtime advises huge pages for its
// own metadata only (since Go 1.21.4), not for the heap.
package hugepages

import (
	"bytes"
	"io/fs"
	"strconv"
)

// Env names the environment variable that turns the advice off ("off").
const Env = "GPUFORM_HUGEPAGES"

// Reserve is the heap address space Advise prepares: larger than any
// plan, drift or apply's heap has grown in the benchmark (size L: 440 MiB
// resident), and only address space until touched.
const Reserve = 1 << 30

// ForCommand reports whether the gpuform command named name should take
// the advice. The node agent (a heap that lives for days) and apply keep
// the runtime's 4 KiB pages: apply runs minutes of writes under a tight
// memory budget, the runtime returns memory in pieces and grows into it
// again a little at a time, and each return of a whole 2 MiB page followed
// by one small allocation in it faults in 2 MiB the runtime counts as
// returned (a size-L apply from empty peaked at 1,074 MB resident against
// 353 MB).
func ForCommand(name string) bool {
	return name != "agent" && name != "apply"
}

// modeFile holds the system's transparent huge page mode, e.g.
// "always [madvise] never".
const modeFile = "sys/kernel/mm/transparent_hugepage/enabled"

// Mode returns the system's transparent huge page mode (always, madvise,
// never) read from fsys (the root file system), or "" when it cannot be read.
func Mode(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, modeFile)
	if err != nil || len(b) > 256 {
		return ""
	}
	i := bytes.IndexByte(b, '[')
	j := bytes.IndexByte(b, ']')
	if i < 0 || j < i {
		return ""
	}
	return string(b[i+1 : j])
}

// sizeFile holds the size of a transparent huge page in bytes.
const sizeFile = "sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

// hugePage is the one huge page size Advise asks for: 2 MiB, the size with
// 4 KiB base pages (amd64, most arm64). With 64 KiB base pages a huge page
// is 512 MiB, which would make a small heap's every touch a large one.
const hugePage = 2 << 20

// Wanted reports whether Advise should act: the system's mode is madvise
// (with always the kernel already gives huge pages, with never it gives
// none), its huge pages are 2 MiB, and getenv's Env is not "off".
func Wanted(fsys fs.FS, getenv func(string) string) bool {
	if getenv(Env) == "off" || Mode(fsys) != "madvise" {
		return false
	}
	b, err := fs.ReadFile(fsys, sizeFile)
	return err == nil && string(bytes.TrimSpace(b)) == strconv.Itoa(hugePage)
}
