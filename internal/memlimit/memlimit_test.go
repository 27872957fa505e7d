package memlimit

import (
	"runtime/debug"
	"testing"
	"testing/fstest"
)

// Limit reads cgroup v2 and v1 limits in the process's cgroup and those
// above it, keeping the smallest, and reads "no limit" as none.
func TestLimit(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, c := range []struct {
		name  string
		files fstest.MapFS
		want  int64
		ok    bool
	}{
		{"v2 in a container (own namespace)", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("536870912\n"),
		}, 536870912, true},
		{"v2 unlimited", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, 0, false},
		{"v2 nested: the smallest on the way up", fstest.MapFS{
			"proc/self/cgroup":                          file("0::/kubepods/pod1/c1\n"),
			"sys/fs/cgroup/memory.max":                  file("max\n"),
			"sys/fs/cgroup/kubepods/memory.max":         file("8589934592\n"),
			"sys/fs/cgroup/kubepods/pod1/memory.max":    file("536870912\n"),
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": file("max\n"),
		}, 536870912, true},
		{"v1", fstest.MapFS{
			"proc/self/cgroup":                                 file("12:pids:/\n4:memory:/job/x\n1:cpu,cpuacct:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":       file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/job/x/memory.limit_in_bytes": file("1073741824\n"),
		}, 1073741824, true},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, 0, false},
		{"a path leaving the mount stays in it", fstest.MapFS{
			"proc/self/cgroup":         file("0::/../../etc\n"),
			"sys/fs/cgroup/memory.max": file("268435456"),
		}, 268435456, true},
		{"garbage", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
		}, 0, false},
		{"no cgroup files", fstest.MapFS{}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Limit(c.files)
			if got != c.want || ok != c.ok {
				t.Errorf("Limit = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// Set gives the runtime ForCgroup of the cgroup's limit, and nothing when
// GOMEMLIMIT is set or there is no limit.
func TestSet(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	fsys := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("536870912\n")},
	}
	noEnv := func(string) string { return "" }
	cg := int64(536870912)
	want := ForCgroup(cg)
	if want != 416074956 { // 512 MiB x 0.9 - 64 MiB
		t.Fatalf("ForCgroup(512 MiB) = %d", want)
	}
	if got := Set(fsys, noEnv); got != want {
		t.Errorf("Set = %d, want %d", got, want)
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("runtime limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(prev)
	env := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}
	if got := Set(fsys, env); got != 0 {
		t.Errorf("with GOMEMLIMIT: Set = %d, want 0", got)
	}
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("with GOMEMLIMIT the runtime limit changed to %d", got)
	}
	if got := Set(fstest.MapFS{}, noEnv); got != 0 {
		t.Errorf("without a cgroup limit: Set = %d, want 0", got)
	}
}
