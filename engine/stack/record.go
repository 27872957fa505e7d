package stack

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// recordWait bounds the write of the stack's record after an apply that
// was stopped (Ctrl-C, a deadline): what was applied is recorded even then.
const recordWait = 30 * time.Second

// recordingTarget is the cluster as an apply walk writes to it, keeping
// the UID of every object it writes, for the stack's record.
type recordingTarget struct {
	Cluster
	mu   sync.Mutex
	uids map[engine.Key]string
}

// Apply writes obj (Cluster.ApplyUID) and keeps its UID.
func (t *recordingTarget) Apply(ctx context.Context, obj *unstructured.Unstructured, force bool) error {
	uid, err := t.ApplyUID(ctx, obj, force)
	return t.keep(obj, uid, err)
}

// ApplyWhole writes obj, of a kind owned whole (Cluster.ApplyWholeUID),
// and keeps its UID.
func (t *recordingTarget) ApplyWhole(ctx context.Context, obj *unstructured.Unstructured) error {
	uid, err := t.ApplyWholeUID(ctx, obj)
	return t.keep(obj, uid, err)
}

// keep records the UID a write of obj returned, unless it failed.
func (t *recordingTarget) keep(obj *unstructured.Unstructured, uid string, err error) error {
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.uids[engine.KeyOf(obj)] = uid
	t.mu.Unlock()
	return nil
}

// record writes the stack's record after an apply of p made from live that
// ended as rep (nil: nothing was applied) with the UIDs uids, while the
// lock is still this run's: a run that lost it writes nothing, as another
// run may be writing. What was applied is recorded even when the apply
// failed part-way or was stopped.
//
// seq is the version announce wrote (-1: none), which this one follows.
func record(ctx context.Context, cl Cluster, p *engine.Plan, live *engine.Live, rep *engine.Report, uids map[engine.Key]string, f fence, seq int64) error {
	if f.check() != nil {
		return nil
	}
	inv := engine.NextInventory(p.Stack, live, p, rep, uids)
	if seq >= 0 {
		inv.Seq = seq
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
	defer cancel()
	if err := cl.WriteInventory(wctx, inv); err != nil {
		return fmt.Errorf("record what stack %s applied in its inventory (%s): %w; the objects this apply created are not recorded, so the next plan shows them as in the way (take them over with --adopt)", p.Stack, engine.LockNamespace, err)
	}
	return nil
}

// announce writes, before the walk of p, the stack's record with p's
// creates pending (engine.PendingInventory), so that an apply killed
// before record leaves the objects it created the stack's; it returns the
// version written, -1 when p creates nothing (nothing written).
func announce(ctx context.Context, cl Cluster, p *engine.Plan, live *engine.Live, f fence) (int64, error) {
	if p.Summary.Add == 0 || f.check() != nil {
		return -1, nil
	}
	inv := engine.PendingInventory(p.Stack, live, p)
	if err := cl.WriteInventory(ctx, inv); err != nil {
		return -1, fmt.Errorf("record the objects stack %s is about to create in its inventory (%s), before creating any: %w", p.Stack, engine.LockNamespace, err)
	}
	return inv.Seq + 1, nil
}
