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

// Owned reports whether u is an object gpuform manages in stack: it
// carries the stack label and field manager gpuform applied it (a
// managedFields entry of manager gpuform, operation Apply). The label alone
// is no proof: anyone who may write an object may label it, and such an
// object is never deleted, updated or counted as the stack's.
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

// notOursReason says why an object with the stack label at a desired key is
// in the way rather than the stack's.
func notOursReason(k Key, stack string) string {
	return fmt.Sprintf("%s carries the label %s=%s, but gpuform never applied it (no field manager %s in its managedFields), so it is not this stack's; run with --adopt to take it over, or rename it in the configuration", k, LabelStack, stack, FieldManager)
}

// unmanagedWarning is the plan's note about an object with the stack label
// that gpuform did not create, which it leaves in place instead of pruning.
func unmanagedWarning(k Key, stack string) string {
	if IsLockNamespace(k) {
		return fmt.Sprintf("%s is the namespace of gpuform's lock; it carries the label %s=%s, but no stack owns it: it is left in place, never deleted", k, LabelStack, stack)
	}
	return fmt.Sprintf("%s carries the label %s=%s, but gpuform never applied it (no field manager %s in its managedFields): it is left in place, not deleted; remove the label, or delete it yourself if it should go", k, LabelStack, stack, FieldManager)
}
