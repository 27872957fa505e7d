package profile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuform/gpuform/internal/profile"
)

// The profiles the environment names are written when the run stops;
// without them Start writes nothing.
func TestStartWritesTheNamedProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	t.Setenv("GPUFORM_CPUPROFILE", cpu)
	t.Setenv("GPUFORM_MEMPROFILE", mem)
	profile.Start()()
	for _, f := range []string{cpu, mem} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	t.Setenv("GPUFORM_CPUPROFILE", "")
	t.Setenv("GPUFORM_MEMPROFILE", "")
	profile.Start()()
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files after a run without profiles: %v", entries)
	}
}
