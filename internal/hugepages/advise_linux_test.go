//go:build linux && (amd64 || arm64)

package hugepages

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

// advisedVMAs returns the sizes in bytes of this process's mappings that
// carry the huge page advice (VmFlags "hg" in /proc/self/smaps).
func advisedVMAs(t *testing.T) []int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sizes []int64
	var size int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Size:"):
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			size = kb << 10
		case strings.HasPrefix(line, "VmFlags:"):
			if strings.Contains(" "+line[len("VmFlags:"):]+" ", " hg ") {
				sizes = append(sizes, size)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sizes
}

func heapMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAdviseMarksHeapReturned checks what Advise leaves: a mapping of at
// least what it marked carries the huge page advice, the block is back with
// the kernel (released, so a soft memory limit does not count it), and the
// heap then grows into the marked space.
func TestAdviseMarksHeapReturned(t *testing.T) {
	const size = 64 << 20
	before := advisedVMAs(t)
	var largest int64
	for _, s := range before {
		largest = max(largest, s)
	}
	marked := Advise(modeFS("always [madvise] never"), func(string) string { return "" }, size)
	if marked < size-2*hugePage {
		t.Fatalf("Advise marked %d bytes of %d", marked, size)
	}
	var found bool
	for _, s := range advisedVMAs(t) {
		found = found || s >= marked
	}
	if !found {
		t.Fatalf("no mapping of %d bytes or more carries the huge page advice (before: %v)", marked, before)
	}
	if free := heapMetric("/memory/classes/heap/free:bytes"); free > size/4 {
		t.Errorf("heap free but not returned to the kernel: %d bytes; the block should be released", free)
	}
	if rel := heapMetric("/memory/classes/heap/released:bytes"); rel < uint64(marked) {
		t.Errorf("heap released: %d bytes, want at least the %d marked", rel, marked)
	}
	// The heap grows into the marked space: a 16 MiB allocation adds no
	// address space the runtime must map anew.
	mapped := heapMetric("/memory/classes/total:bytes")
	keep := make([]byte, 16<<20)
	for i := range keep {
		keep[i] = 1
	}
	if grown := heapMetric("/memory/classes/total:bytes") - mapped; grown > 4<<20 {
		t.Errorf("the heap mapped %d more bytes for 16 MiB with %d marked and free", grown, marked)
	}
	runtime.KeepAlive(keep)
}

func TestAdviseNotWanted(t *testing.T) {
	tests := []struct {
		name string
		mode string
		env  string
		size int
	}{
		{"always", "[always] madvise never", "", 64 << 20},
		{"turned off", "always [madvise] never", "off", 64 << 20},
		{"smaller than two huge pages", "always [madvise] never", "", hugePage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := heapMetric("/memory/classes/total:bytes")
			got := Advise(modeFS(tt.mode), func(k string) string {
				if k == Env {
					return tt.env
				}
				return ""
			}, tt.size)
			if got != 0 {
				t.Errorf("Advise marked %d bytes, want none", got)
			}
			if after := heapMetric("/memory/classes/total:bytes"); after > before+uint64(tt.size)/2 {
				t.Errorf("Advise grew the heap from %d to %d bytes without advising", before, after)
			}
		})
	}
}
