// Package memlimit gives the Go runtime a soft memory limit from the memory
// limit of the cgroup gpuform runs in, so that a run in a small container
// (a drift CronJob's pod) collects garbage harder as it nears the limit
// instead of being killed by the kernel.
package memlimit

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"math"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// Fraction is the share of the cgroup's limit the Go runtime may count as
// its own, before Reserve: the rest is for what it frees and has not yet
// returned to the kernel, and stacks in flight.
const Fraction = 0.9

// Reserve is taken from the limit for the memory a gpuform process holds
// that the runtime does not count: the binary's mapped pages (a command
// that does nothing is 61 MiB resident). Without it a drift of size L ran
// at 517 MiB resident under the 460 MiB a 512 MiB container gave it.
const Reserve = 64 << 20

// ForCgroup is the soft limit Set gives the runtime in a cgroup limited to
// cg bytes: Fraction of it less Reserve, and never under half of it.
func ForCgroup(cg int64) int64 {
	return max(int64(float64(cg)*Fraction)-Reserve, cg/2)
}

// unlimited is the value from which a cgroup v1 limit means none (the
// kernel reports "no limit" as the largest page-aligned int64).
const unlimited = 1 << 62

// maxFileSize bounds what is read of a cgroup file.
const maxFileSize = 64 << 10

// Set sets the runtime's soft memory limit to ForCgroup of the cgroup limit
// Limit finds in fsys (the root file system), unless getenv has GOMEMLIMIT
// (the runtime has applied it: the person running gpuform chose). It
// returns the limit it set, 0 when it set none.
func Set(fsys fs.FS, getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	cg, ok := Limit(fsys)
	if !ok {
		return 0
	}
	lim := ForCgroup(cg)
	debug.SetMemoryLimit(lim)
	return lim
}

// Limit returns the memory limit of the process's cgroup in bytes, read
// from fsys (the root file system: proc/self/cgroup, then sys/fs/cgroup):
// cgroup v2's memory.max, else cgroup v1's memory.limit_in_bytes, in the
// process's own cgroup and every cgroup above it, the smallest. ok is false
// when there is no limit or none can be read.
func Limit(fsys fs.FS) (limit int64, ok bool) {
	self, _ := readSmall(fsys, "proc/self/cgroup")
	v1, v2 := "/", "/"
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasController(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	limit = math.MaxInt64
	for _, c := range []struct{ dir, cgroup, file string }{
		{"sys/fs/cgroup", v2, "memory.max"},
		{"sys/fs/cgroup/memory", v1, "memory.limit_in_bytes"},
	} {
		for _, dir := range ancestors(c.dir, c.cgroup) {
			if n, found := readLimit(fsys, path.Join(dir, c.file)); found && n < limit {
				limit, ok = n, true
			}
		}
		if ok {
			return limit, true
		}
	}
	return 0, false
}

// hasController reports whether a /proc/self/cgroup controller list names c.
func hasController(list, c string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == c {
			return true
		}
	}
	return false
}

// ancestors returns the directories of cgroup under mount, from the mount
// down to the cgroup's own (path.Clean keeps a ".." within the mount).
func ancestors(mount, cgroup string) []string {
	dirs := []string{mount}
	var own []string
	for p := path.Clean("/" + cgroup); p != "/"; p = path.Dir(p) {
		own = append(own, mount+p)
	}
	slices.Reverse(own)
	return append(dirs, own...)
}

// readLimit reads one limit file: a number of bytes, "max" (none) or, in
// cgroup v1, a number so large it means none.
func readLimit(fsys fs.FS, name string) (int64, bool) {
	b, err := readSmall(fsys, name)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= unlimited {
		return 0, false
	}
	return n, true
}

// readSmall reads at most maxFileSize bytes of name.
func readSmall(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFileSize))
}
