package stack

import (
	"context"
	"fmt"
	"sort"

	"github.com/gpuform/gpuform/engine"
)

// StateEntry is one object the stack owns by its inventory record.
type StateEntry struct {
	// Address is the configuration address it was applied from; Key the
	// object.
	Address string
	Key     engine.Key
	// Commit is the stamp of the apply that last wrote it.
	Commit string
}

// StateResult is what State found.
type StateResult struct {
	// Stack is the stack's name; Source the cluster read.
	Stack, Source string
	// Recorded is false when the cluster holds no record of the stack (it
	// was never applied, or by a gpuform that kept none).
	Recorded bool
	// Entries are the recorded objects, by address then key.
	Entries []StateEntry
}

// State lists what the stack owns: its inventory record in the cluster
// (Terraform's state list). It writes nothing.
func (s *Stack) State(ctx context.Context) (*StateResult, error) {
	head, cl, err := s.compileOpen(ctx, compileMode{})
	if err != nil {
		return nil, err
	}
	live, err := cl.Refresh(ctx, head.desired, engine.RefreshOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the state of stack %s: %w", head.desired.Stack, err)
	}
	res := &StateResult{Stack: head.desired.Stack, Source: live.Source, Recorded: live.Inventory != nil}
	if live.Inventory == nil {
		return res, nil
	}
	for k, e := range live.Inventory.Objects {
		res.Entries = append(res.Entries, StateEntry{Address: e.Address, Key: k, Commit: e.Commit})
	}
	sort.Slice(res.Entries, func(i, j int) bool {
		a, b := res.Entries[i], res.Entries[j]
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Key.String() < b.Key.String()
	})
	return res, nil
}
