package stack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gpuform/gpuform/engine"
)

// ImportOptions tune Import.
type ImportOptions struct {
	// LockHolder and LockWait are as ApplyOptions'.
	LockHolder string
	LockWait   time.Duration
}

// ImportResult is what Import recorded.
type ImportResult struct {
	// Key is the object imported, Address the block it now belongs to.
	Key     engine.Key
	Address string
	// LockID and UnlockErr are as ApplyResult's.
	LockID    string
	UnlockErr error
}

// Import adopts one existing object into the stack's inventory record
// under the stack's lock, as Terraform's import does: the object that the
// block at address produces, named by id (KIND/NAMESPACE/NAME, or
// KIND/NAME for a cluster-scoped kind; KIND may be Kind.group). It writes
// nothing but the record: the next plan shows at most an update of the
// object (the fields the configuration sets differently, and the stack's
// marks). It refuses an id no block of the configuration produces, or
// that another block does; an object in a namespace the stack does not
// create, or in gpuform's lock namespace; one that does not exist, that the
// stack owns already, or that carries another stack's label.
func (s *Stack) Import(ctx context.Context, address, id string, opts ImportOptions) (*ImportResult, error) {
	head, err := s.compile(ctx, planMode())
	if err != nil {
		return nil, err
	}
	o, err := importTarget(head.desired, address, id)
	if err != nil {
		return nil, err
	}
	cl, err := s.open(ctx, head.cfg)
	if err != nil {
		return nil, err
	}
	out := &ImportResult{Key: o.Key(), Address: address}
	res, err := s.locked(ctx, cl, head.desired.Stack, ApplyOptions{LockHolder: opts.LockHolder, LockWait: opts.LockWait}, func(ctx context.Context, f fence, _ *ApplyResult) error {
		return s.importLocked(ctx, cl, head.desired, o, f)
	})
	if res != nil {
		out.LockID, out.UnlockErr = res.LockID, res.UnlockErr
	}
	return out, err
}

// importLocked records o's live object in the stack's record, under the
// lock f fences.
func (s *Stack) importLocked(ctx context.Context, cl Cluster, d *engine.Desired, o *engine.Object, f fence) error {
	k := o.Key()
	// Read whole, as for an adoption: an object in the way is otherwise
	// read as little as its key.
	live, err := cl.Refresh(ctx, d, engine.RefreshOptions{Adopt: true})
	if err != nil {
		return err
	}
	cur := live.Objects[k]
	if cur == nil {
		cur = live.Foreign[k]
	}
	switch {
	case cur == nil:
		return fmt.Errorf("import %s: it does not exist in %s; plan creates it, there is nothing to import", k, live.Source)
	case live.Owns(k, cur, d.Stack):
		return fmt.Errorf("import %s: stack %s owns it already (gpuform state list shows it)", k, d.Stack)
	case cur.GetLabels()[engine.LabelStack] != "" && cur.GetLabels()[engine.LabelStack] != d.Stack:
		return fmt.Errorf("import %s: it belongs to gpuform stack %s; an object belongs to one stack, so remove it from that stack's configuration and apply there first", k, cur.GetLabels()[engine.LabelStack])
	case cur.GetUID() == "":
		return fmt.Errorf("import %s: the cluster gave it no UID to record", k)
	}
	p, err := engine.Diff(d, live, engine.DiffOptions{})
	if err != nil {
		return fmt.Errorf("import %s into stack %s: %w", k, d.Stack, err)
	}
	inv := engine.NextInventory(d.Stack, live, p, nil, nil)
	inv.Objects[k] = engine.InventoryEntry{UID: string(cur.GetUID()), Address: o.Address}
	if err := f.check(); err != nil {
		return err
	}
	if err := cl.WriteInventory(ctx, inv); err != nil {
		return fmt.Errorf("import %s: record it in the inventory of stack %s (%s): %w", k, d.Stack, engine.LockNamespace, err)
	}
	return nil
}

// importTarget is the desired object that the block at address produces
// and id names (see Import), or why there is none.
func importTarget(d *engine.Desired, address, id string) (*engine.Object, error) {
	parts := strings.Split(id, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("import: %q is not KIND/NAMESPACE/NAME (or KIND/NAME for a cluster-scoped kind)", id)
	}
	kind, group, _ := strings.Cut(parts[0], ".")
	ns, name := "", parts[len(parts)-1]
	if len(parts) == 3 {
		ns = parts[1]
	}
	managed := map[string]bool{}
	for _, o := range d.Objects {
		if k := o.Key(); k.Kind == engine.KindNamespace.Kind && k.Group == "" {
			managed[k.Name] = true
		}
	}
	var found *engine.Object
	for _, o := range d.Objects {
		k := o.Key()
		if strings.EqualFold(k.Kind, kind) && (group == "" || group == k.Group) && k.Namespace == ns && k.Name == name {
			found = o
			break
		}
	}
	switch {
	case found == nil:
		return nil, fmt.Errorf("import: no block of the configuration produces %s; import adopts only an object the configuration would create (plan lists them)", id)
	case found.Address != address:
		return nil, fmt.Errorf("import: %s is produced by %s, not %s", found.Key(), found.Address, address)
	case engine.IsLockNamespace(found.Key()):
		return nil, fmt.Errorf("import: %s is in gpuform's lock namespace, which no stack may own", found.Key())
	case ns != "" && !managed[ns]:
		return nil, fmt.Errorf("import: %s is in namespace %s, which stack %s does not manage (no tenant of the configuration has it)", found.Key(), ns, d.Stack)
	}
	return found, nil
}
