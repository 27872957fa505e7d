// Package profile writes the CPU and heap profiles the environment asks
// for (GPUFORM_CPUPROFILE, GPUFORM_MEMPROFILE), for performance work on a
// whole gpuform run.
package profile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Start starts the profiles named by the environment, for
// performance work: GPUFORM_CPUPROFILE=FILE writes a CPU profile of the
// run, GPUFORM_MEMPROFILE=FILE a heap profile (allocations included) at its
// end. The returned function stops them; it is a no-op without either.
func Start() (stop func()) {
	cpu, mem := os.Getenv("GPUFORM_CPUPROFILE"), os.Getenv("GPUFORM_MEMPROFILE")
	var f *os.File
	if cpu != "" {
		var err error
		if f, err = os.Create(cpu); err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "Warning: CPU profile %s: %v\n", cpu, err)
			f = nil
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			_ = f.Close()
		}
		if mem != "" {
			runtime.GC()
			m, err := os.Create(mem)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(m, 0)
				_ = m.Close()
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "Warning: heap profile %s: %v\n", mem, err)
			}
		}
	}
}
