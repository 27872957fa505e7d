package memlimit

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitFor(t *testing.T) {
	for _, c := range []struct{ budget, live, want int64 }{
		{400, 0, 400},
		{400, 200, 400},
		{400, 266, 400},
		{400, 300, 450},
		{400, 1000, 1500},
	} {
		if got := LimitFor(c.budget, c.live); got != c.want {
			t.Errorf("LimitFor(%d, %d) = %d, want %d", c.budget, c.live, got, c.want)
		}
	}
}

// currentLimit reads the soft memory limit without changing it.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

// waitLimit collects until the limit satisfies ok (the tuner adjusts it
// after a collection, on the finalizer goroutine).
func waitLimit(t *testing.T, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if l := currentLimit(); ok(l) || time.Now().After(deadline) {
			return l
		}
	}
}

// TestTuneFollowsTheLiveHeap: the limit is the budget while little is
// live, grows to 1.5x what is live beyond it, comes back when it is freed,
// and is put back by stop.
func TestTuneFollowsTheLiveHeap(t *testing.T) {
	before := currentLimit()
	const budget = 32 << 20
	tuner := Tune(budget, func(string) string { return "" })
	if l := waitLimit(t, func(l int64) bool { return l == budget }); l != budget {
		t.Fatalf("limit %d with little live, want the budget %d", l, budget)
	}
	held := make([][]byte, 64)
	for i := range held {
		held[i] = make([]byte, 1<<20) // 64 MiB live
	}
	if l := waitLimit(t, func(l int64) bool { return l >= 96<<20 }); l < 96<<20 || l > 128<<20 {
		t.Fatalf("limit %d MiB with 64 MiB live, want about 96 MiB", l>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	if l := waitLimit(t, func(l int64) bool { return l == budget }); l != budget {
		t.Fatalf("limit %d MiB once freed, want the budget", l>>20)
	}
	const smaller = 24 << 20
	tuner.SetBudget(smaller)
	if l := currentLimit(); l != smaller {
		t.Fatalf("limit %d after SetBudget(%d), want it at once", l, smaller)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if l := currentLimit(); l != smaller {
		t.Fatalf("limit %d after a collection, want the new budget %d", l, smaller)
	}
	tuner.Stop()
	if l := currentLimit(); l != before {
		t.Fatalf("limit %d after stop, want %d as before", l, before)
	}
}

func TestTuneLeavesGOMEMLIMIT(t *testing.T) {
	before := currentLimit()
	tuner := Tune(1<<20, func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	})
	if tuner != nil {
		t.Fatal("Tune returned a Tuner with GOMEMLIMIT set")
	}
	tuner.SetBudget(2 << 20) // a nil Tuner does nothing
	defer tuner.Stop()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if l := currentLimit(); l != before {
		t.Fatalf("limit %d with GOMEMLIMIT set, want it untouched (%d)", l, before)
	}
}

// TestTunerTravelsInTheContext: the command that runs finds the process's
// Tuner in its context, and a context without one gives a nil Tuner whose
// methods do nothing.
func TestTunerTravelsInTheContext(t *testing.T) {
	tuner := &Tuner{}
	if got := FromContext(NewContext(context.Background(), tuner)); got != tuner {
		t.Fatalf("FromContext = %p, want %p", got, tuner)
	}
	if got := FromContext(context.Background()); got != nil {
		t.Fatalf("FromContext of an empty context = %p, want nil", got)
	}
}
