//go:build !linux

package hugepages

import "io/fs"

// Advise does nothing where there are no transparent huge pages to ask for.
func Advise(fsys fs.FS, getenv func(string) string, size int) int64 { return 0 }
