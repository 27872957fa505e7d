package nvml

import (
	"fmt"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
)

// resolve maps each GPU index below n that the layout names to its entry.
func resolve(l agentv1.Layout, n int) (map[int]agentv1.LayoutEntry, error) {
	out := map[int]agentv1.LayoutEntry{}
	for i, e := range l {
		if !e.Enabled {
			for prof, c := range e.Slices {
				if c != 0 {
					return nil, fmt.Errorf("layout entry %d turns MIG off but asks for %d x %s", i, c, prof)
				}
			}
		}
		switch {
		case e.All && len(e.Indexes) > 0:
			return nil, fmt.Errorf("layout entry %d sets both All and Indexes", i)
		case e.All:
			for j := 0; j < n; j++ {
				out[j] = e
			}
		case len(e.Indexes) > 0:
			for _, j := range e.Indexes {
				if j < 0 || j >= n {
					return nil, fmt.Errorf("layout entry %d names GPU %d, but this machine has %d GPUs", i, j, n)
				}
				out[j] = e
			}
		default:
			return nil, fmt.Errorf("layout entry %d names no GPU (set All or Indexes)", i)
		}
	}
	return out, nil
}
