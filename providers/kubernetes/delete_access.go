package kubernetes

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"

	"github.com/gpuform/gpuform/engine"
)

// accessGoneWait bounds how long a delete of a RoleBinding waits for the
// object to be gone.
const accessGoneWait = 10 * time.Second

// grantsAccess reports whether k is a RoleBinding: an object whose mere
// existence, even while it is being deleted, grants access.
func grantsAccess(k engine.Key) bool {
	return k.Group == engine.KindRoleBinding.Group && k.Kind == engine.KindRoleBinding.Kind
}

// deletePropagation is how a delete of k propagates: in the background for
// a RoleBinding (it has no dependents, so it is removed at once rather than
// left for the garbage collector with a foregroundDeletion finalizer while
// it still grants access), else in the foreground.
func deletePropagation(k engine.Key) metav1.DeletionPropagation {
	if grantsAccess(k) {
		return metav1.DeletePropagationBackground
	}
	return metav1.DeletePropagationForeground
}

// waitAccessGone waits until the RoleBinding at k, just deleted through ri,
// no longer exists, so that the deletes of what enforces the tenant (its
// quota, the stack's admission policies), which run after it, never leave
// access without enforcement. One that stays (a finalizer someone added)
// is an error: the apply walk then deletes nothing it guards.
func waitAccessGone(ctx context.Context, ri dynamic.ResourceInterface, k engine.Key) error {
	ctx, cancel := context.WithTimeout(ctx, accessGoneWait)
	defer cancel()
	// A LIST by name, not a GET: the apply role lists and deletes the
	// kinds it manages, and gets none of them.
	byName := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", k.Name).String()}
	for {
		list, err := ri.List(ctx, byName)
		switch {
		case err == nil && len(list.Items) == 0:
			return nil
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("delete %s: check that it is gone: %w", k, err)
		case err == nil && ctx.Err() == nil:
			select {
			case <-time.After(100 * time.Millisecond):
				continue
			case <-ctx.Done():
			}
		}
		var finalizers []string
		if err == nil && len(list.Items) > 0 {
			finalizers = list.Items[0].GetFinalizers()
		}
		return fmt.Errorf("delete %s: it is still there after its delete (finalizers %v) and grants access while it is, so nothing that enforces its namespace is deleted; remove its finalizers and run again", k, finalizers)
	}
}
