package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine/fleet"
)

// TestEachBound: at most n members run at once, all n are used, and
// results come back in fleet order whatever order members finish in.
func TestEachBound(t *testing.T) {
	const count = 8
	for _, n := range []int{1, 2, 4, 8} {
		var running, peak atomic.Int32
		got := fleet.Each(context.Background(), count, n, func(_ context.Context, i int) string {
			now := running.Add(1)
			for {
				p := peak.Load()
				if now <= p || peak.CompareAndSwap(p, now) {
					break
				}
			}
			// Later members finish first.
			time.Sleep(time.Duration(count-i) * 3 * time.Millisecond)
			running.Add(-1)
			return string(rune('a' + i))
		})
		if int(peak.Load()) != n {
			t.Errorf("n=%d: %d members ran at once", n, peak.Load())
		}
		if strings.Join(got, "") != "abcdefgh" {
			t.Errorf("n=%d: results %v, want fleet order", n, got)
		}
	}
}

func TestSelect(t *testing.T) {
	all := []string{"west", "east", "burst"}
	id := func(s string) string { return s }
	tests := []struct {
		names []string
		want  string
		err   string
	}{
		{nil, "west east burst", ""},
		{[]string{"burst", "west"}, "west burst", ""},
		{[]string{"north", "east", "south"}, "", "--cluster north, south: no such member of the fleet (its members: west, east, burst)"},
	}
	for _, tc := range tests {
		got, err := fleet.Select(all, id, tc.names)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: error %v, want %q", tc.names, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%v: %v %v, want %s", tc.names, got, err, tc.want)
		}
	}
}

func TestFailure(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: open x.sim.hcl:\n no such file", fleet.ErrUnreachable), "unreachable: cannot open the cluster: open x.sim.hcl: no such file"},
		{errors.New("plan stack s: boom"), "failed: plan stack s: boom"},
	}
	for _, tc := range tests {
		if got := fleet.Failure(tc.err); got != tc.want {
			t.Errorf("Failure(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// unreachable is an error that says its cluster could not be reached, as
// the Kubernetes provider's explained network errors do.
type unreachable struct{}

func (unreachable) Error() string     { return "list Namespaces: cannot reach the server" }
func (unreachable) Unreachable() bool { return true }

func TestFailureOfAnUnreachableProviderError(t *testing.T) {
	if got := fleet.Failure(fmt.Errorf("plan: %w", unreachable{})); got != "unreachable: plan: list Namespaces: cannot reach the server" {
		t.Errorf("got %q", got)
	}
}
