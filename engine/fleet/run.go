package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// DefaultParallelism is how many members a fleet command works on at once
// unless told otherwise.
const DefaultParallelism = 4

// Each runs fn for members 0..count-1, at most n at once, and returns the
// results in member order whatever order they finish in.
func Each[T any](ctx context.Context, count, n int, fn func(ctx context.Context, i int) T) []T {
	out := make([]T, count)
	sem := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for i := range count {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = fn(ctx, i)
		}()
	}
	wg.Wait()
	return out
}

// Select narrows members (named by name) to those called one of names, in
// fleet order; no names keeps every member, and a name that is no member
// is an error.
func Select[M any](members []M, name func(M) string, names []string) ([]M, error) {
	if len(names) == 0 {
		return members, nil
	}
	all := make([]string, len(members))
	for i, m := range members {
		all[i] = name(m)
	}
	var unknown []string
	for _, n := range names {
		if !slices.Contains(all, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("--cluster %s: no such member of the fleet (its members: %s)", strings.Join(unknown, ", "), strings.Join(all, ", "))
	}
	var out []M
	for _, m := range members {
		if slices.Contains(names, name(m)) {
			out = append(out, m)
		}
	}
	return out, nil
}

// ErrUnreachable marks an error opening a member's cluster.
var ErrUnreachable = errors.New("cannot open the cluster")

// Failure says, on one line, why a member has no result: "unreachable:
// ..." when its cluster could not be opened or answered no request (a
// network error, ErrUnreachable, or an error whose Unreachable method says
// so, as the Kubernetes provider's do), "failed: ..." otherwise.
func Failure(err error) string {
	var ue *url.Error
	var ne net.Error
	var un interface{ Unreachable() bool }
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, ErrUnreachable) || (errors.As(err, &un) && un.Unreachable()) {
		return "unreachable: " + msg
	}
	return "failed: " + msg
}
