package engine

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LockNamespace is the namespace of every stack's apply lock (the Lease
// gpuform-<stack>). No stack may own it: a tenant cannot name it as its
// namespace (compile.Validate), a plan never deletes or takes it over, and a
// saved plan that touches it is refused.
const LockNamespace = "gpuform-system"

// lockNamespaceKey is the key of LockNamespace.
var lockNamespaceKey = Key{Kind: "Namespace", Name: LockNamespace}

// IsLockNamespace reports whether k is the lock's Namespace.
func IsLockNamespace(k Key) bool { return k == lockNamespaceKey }

// Owned is the rule of ownership that stands in while a stack has no
// record yet (see Live.Owns, Inventory): u carries the stack label and
// field manager gpuform applied it (a managedFields entry of manager
// gpuform, operation Apply). It is no proof once the stack has a record:
// whoever may write an object (a tenant, in its namespace) may set both.
// The refresh's Settler uses it to choose what to settle; Diff asks the
// record.
func Owned(u *unstructured.Unstructured, stack string) bool {
	if u == nil {
		return false
	}
	md, _ := u.Object["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if v, _ := labels[LabelStack].(string); v != stack {
		return false
	}
	entries, _ := md["managedFields"].([]any)
	for _, e := range entries {
		mf, _ := e.(map[string]any)
		if mf["manager"] == FieldManager && mf["operation"] == string(metav1.ManagedFieldsOperationApply) {
			return true
		}
	}
	return false
}

// notOursReason says why u, an object with the stack label at a desired
// key, is in the way rather than the stack's (see Live.Owns).
func notOursReason(k Key, u *unstructured.Unstructured, live *Live, stack string) string {
	if live.Inventory != nil {
		return fmt.Sprintf("%s carries the label %s=%s, but is not in the stack's inventory with its UID (gpuform never applied it, or it was deleted and created again since), so it is not this stack's; run with --adopt to take it over, or rename it in the configuration", k, LabelStack, stack)
	}
	return fmt.Sprintf("%s carries the label %s=%s, but gpuform never applied it (no field manager %s in its managedFields), so it is not this stack's; run with --adopt to take it over, or rename it in the configuration", k, LabelStack, stack, FieldManager)
}

// unmanagedWarning is the plan's note about u, an object with the stack
// label at a key the configuration does not have, that the stack may not
// delete (see prunes): it is left in place.
func unmanagedWarning(k Key, u *unstructured.Unstructured, live *Live, stack string) string {
	switch {
	case IsLockNamespace(k):
		return fmt.Sprintf("%s is the namespace of gpuform's lock; it carries the label %s=%s, but no stack owns it: it is left in place, never deleted", k, LabelStack, stack)
	case live.Inventory != nil:
		return fmt.Sprintf("%s carries the label %s=%s, but is not in the stack's inventory: left in place, not deleted; labels and field managers are no proof of ownership, as whoever may write an object may set them; remove the label, or delete it yourself if it should go", k, LabelStack, stack)
	case Owned(u, stack):
		return fmt.Sprintf("%s carries the label %s=%s and gpuform's field manager, but the stack has no inventory yet (its last apply was by a gpuform that kept none): left in place, not deleted; the next apply records the stack's objects, after which it would not be pruned either: delete it yourself if it should go", k, LabelStack, stack)
	}
	return fmt.Sprintf("%s carries the label %s=%s, but gpuform never applied it (no field manager %s in its managedFields): it is left in place, not deleted; remove the label, or delete it yourself if it should go", k, LabelStack, stack, FieldManager)
}
