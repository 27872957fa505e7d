package main

import (
	"fmt"
	"testing"
)

// BenchmarkFleetNoOpPlan plans a fleet of 10 simulated quickstart members
// where everything is applied (a no-op plan on each), with the members
// planned one after another (--fleet-parallelism 1) and concurrently.
func BenchmarkFleetNoOpPlan(b *testing.B) {
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("member-%02d", i)
	}
	f := newTestFleet(b, names...)
	if r := f.run(b, nil, "apply", "--auto-approve", "--fleet-parallelism", "10"); r.code != 0 {
		b.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	for _, n := range []int{1, 4, 10} {
		b.Run(fmt.Sprintf("fleet-parallelism=%d", n), func(b *testing.B) {
			for b.Loop() {
				if r := f.run(b, nil, "plan", "--detailed-exitcode", "--fleet-parallelism", fmt.Sprint(n)); r.code != 0 {
					b.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}
