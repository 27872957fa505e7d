package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuform/gpuform/internal/memlimit"
)

// table renders the results as Markdown: plan, apply and scaling.
func table(rs []*sizeResult) string {
	var b strings.Builder
	b.WriteString("\n#### Plan (seconds: median, min–max)\n\n")
	b.WriteString("| size | objects | nodes | gpuform plan, no-op | gpuform plan, 10% tenants changed | config load | raw LISTs | floor (load + LISTs) | plan / floor | kubectl diff --server-side | kubectl diff / plan | plan requests | plan peak RSS |\n")
	b.WriteString("|---|---:|---:|---|---|---|---|---|---:|---|---:|---:|---:|\n")
	for _, r := range rs {
		floor := r.load.median() + r.list.median()
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s | %.2fx | %s | %s | %d | %d MB |\n",
			r.size.Name, r.objects, r.size.Nodes,
			cell(r.planNoop), cell(r.planChanged)+fmt.Sprintf(" (%d changes)", r.changed),
			cell(r.load), cell(r.list)+fmt.Sprintf(" (%d requests)", r.listReqs), secs(floor),
			ratio(r.planNoop.median(), floor), cell(r.diffK), ratioX(r.diffK.median(), r.planNoop.median()),
			r.planReqs, r.planRSS>>20)
	}
	b.WriteString("\n#### Apply from empty (seconds: median, min–max)\n\n")
	b.WriteString("| size | objects | gpuform apply | kubectl apply --server-side --validate=false | gpuform objects/s | kubectl objects/s | throughput gpuform / kubectl | apply requests (writes) | apply peak RSS |\n")
	b.WriteString("|---|---:|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		g, k := r.applyG.median(), r.applyK.median()
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.0f | %.0f | %s | %d (%d) | %d MB |\n",
			r.size.Name, r.objects, cell(r.applyG), cell(r.applyK),
			perSec(r.objects, g), perSec(r.objects, k), ratioX(k, g), r.applyReqs, r.applyWrites, r.applyRSS>>20)
	}
	driftTable(&b, rs)
	boundTable(&b, rs)
	b.WriteString("\n#### Scaling\n\n")
	b.WriteString("| size | objects | plan no-op | plan ms per 1,000 objects | plan requests | raw LIST requests |\n")
	b.WriteString("|---|---:|---|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %d | %d |\n", r.size.Name, r.objects, secs(r.planNoop.median()),
			perThousand(r.planNoop.median(), r.objects), r.planReqs, r.listReqs)
	}
	return b.String()
}

// perThousand is d in milliseconds per 1,000 of n objects.
func perThousand(d time.Duration, n int) float64 {
	return float64(d.Milliseconds()) * 1000 / float64(max(1, n))
}

// cell is "median (min–max)".
func cell(s sample) string {
	if len(s) == 0 {
		return "–"
	}
	if len(s) == 1 {
		return secs(s[0]) + " (1 run)"
	}
	return fmt.Sprintf("%s (%s)", secs(s.median()), s.spread())
}

// ratio is a/b.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// ratioX is a/b as "12.3x".
func ratioX(a, b time.Duration) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1fx", ratio(a, b))
}

func perSec(n int, d time.Duration) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// podMemory is the container memory limit drift is measured against: the
// one a drift of the largest size must fit.
const podMemory = 768 << 20

// podGoMemLimit is the soft limit gpuform sets in a podMemory container
// (internal/memlimit), as GOMEMLIMIT spells it.
func podGoMemLimit() string {
	return fmt.Sprintf("%dMiB", memlimit.ForCgroup(podMemory)>>20)
}

// fitsPod says whether a peak RSS fits a podMemory container.
func fitsPod(rss int64) string {
	if rss > 0 && rss <= podMemory {
		return "yes"
	}
	return "no"
}

// driftTable renders drift's peak RSS in a podMemory container, when it
// was measured.
func driftTable(b *strings.Builder, rs []*sizeResult) {
	if !slices.ContainsFunc(rs, func(r *sizeResult) bool { return r.driftPodRSS > 0 }) {
		return
	}
	fmt.Fprintf(b, "\n#### Drift in a %d MiB container (GOMEMLIMIT=%s, what gpuform sets there)\n\n", podMemory>>20, podGoMemLimit())
	b.WriteString("| size | objects | drift peak RSS | fits |\n")
	b.WriteString("|---|---:|---:|---|\n")
	for _, r := range rs {
		fmt.Fprintf(b, "| %s | %d | %d MB | %s |\n", r.size.Name, r.objects, r.driftPodRSS>>20, fitsPod(r.driftPodRSS))
	}
}

// boundTable is the no-op plan against its CPU bound (cpuBound), one row
// per size, where it was measured.
func boundTable(b *strings.Builder, rs []*sizeResult) {
	if !slices.ContainsFunc(rs, func(r *sizeResult) bool { return len(r.bound) > 0 }) {
		return
	}
	b.WriteString("\n#### Plan against its CPU bound (seconds: median, min–max)\n\n")
	b.WriteString("| size | objects | gpuform plan, no-op | config load | plan CPU after the load | API server CPU during the plan | CPU bound | plan / CPU bound |\n")
	b.WriteString("|---|---:|---|---|---|---|---|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %.2fx |\n", r.size.Name, r.objects,
			cell(r.planNoop), cell(r.load), cell(r.afterLoad), cell(r.server), cell(r.bound),
			ratio(r.planNoop.median(), r.bound.median()))
	}
}
