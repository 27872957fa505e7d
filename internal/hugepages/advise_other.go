//go:build !(linux && (amd64 || arm64))

package hugepages

import "io/fs"

// Advise does nothing outside 64-bit Linux: no transparent huge pages to ask
// for, or (32-bit) too little address space to set a gigabyte of it aside.
func Advise(fsys fs.FS, getenv func(string) string, size int) int64 { return 0 }
