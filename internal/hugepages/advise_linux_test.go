//go:build linux && (amd64 || arm64)

package hugepages

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

// isolatedEnv names the test a child test process runs (see isolated).
const isolatedEnv = "GPUFORM_HUGEPAGES_TEST"

// isolated runs the calling test alone in a fresh process of the test
// binary, whose heap has seen nothing of the other tests (each Advise
// leaves the space it marked used): it reports true in that process, where
// the test goes on, and false in this one, once the child has passed.
func isolated(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a process of its own: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s did not run in a process of its own:\n%s", t.Name(), out)
	}
	return false
}

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

// TestAdviseMarksHeapReturned checks what Advise leaves: mappings of at
// least what it marked carry the huge page advice, the block is back with
// the kernel (released, so a soft memory limit does not count it), and the
// heap then grows into the marked space.
func TestAdviseMarksHeapReturned(t *testing.T) {
	if !isolated(t) {
		return
	}
	const size = 64 << 20
	sum := func(sizes []int64) (n int64) {
		for _, s := range sizes {
			n += s
		}
		return n
	}
	before := advisedVMAs(t)
	marked := Advise(modeFS("always [madvise] never"), func(string) string { return "" }, size)
	if marked < size-4*hugePage {
		t.Fatalf("Advise marked %d bytes of %d", marked, size)
	}
	if after := advisedVMAs(t); sum(after)-sum(before) < marked {
		t.Fatalf("mappings carrying the huge page advice grew from %v to %v, less than the %d bytes marked", before, after, marked)
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

// peakRSS returns this process's peak resident memory (VmHWM) in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// TestAdviseTouchesNothing checks that Advise faults in nothing of the
// block where the heap's free space begins with pages it freed and has not
// returned to the kernel: the runtime zeroes a new allocation that takes
// any such page, all of it, which for the block would fault in every page
// (1% of gpuform's starts did, 1.1 GB and 2.5 s of system time, before
// Advise probed). The probes take those pages; the block goes after them.
func TestAdviseTouchesNothing(t *testing.T) {
	if !isolated(t) {
		return
	}
	const size = 256 << 20
	touch := func(b []byte) {
		for i := range b {
			b[i] = 1
		}
		runtime.KeepAlive(b)
	}
	touch(make([]byte, 2*size))
	debug.FreeOSMemory() // space used before, returned: the runtime knows it is zero
	touch(make([]byte, 8<<20))
	runtime.GC() // 8 MiB at its start freed and not returned: the runtime must zero what takes them
	// Reset the peak to what is resident now (proc(5), clear_refs).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	before := peakRSS(t)
	marked := Advise(modeFS("always [madvise] never"), func(string) string { return "" }, size)
	if marked < size-probeBudget {
		t.Errorf("Advise marked %d MiB of %d", marked>>20, size>>20)
	}
	if grown := peakRSS(t) - before; grown > 16<<20 {
		t.Errorf("peak RSS grew by %d MiB advising %d MiB: the block was touched", grown>>20, size>>20)
	}
}
