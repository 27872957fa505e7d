package engine

import (
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/kinds"
)

// DiffOwned is DiffFields of a live object of the stack against its desired
// content, as plan, settle and drift compare them: for a kind the registry
// owns whole (kinds.Entry.OwnedWhole) it adds, as removed, every field
// another field manager set that desired does not (ForeignPaths), so that
// a scope selector someone added to a tenant's quota is a change, not
// "No changes".
func DiffOwned(reg *kinds.Registry, desired map[string]any, live *unstructured.Unstructured) []FieldDiff {
	out := DiffFields(desired, live, FieldManager)
	if !reg.OwnedWhole(live.GroupVersionKind().GroupKind()) {
		return out
	}
	n := len(out)
	for _, path := range ForeignFields(live, desired) {
		v, _ := getPath(live.Object, path)
		p := FormatPath(path)
		if hasPath(out[:n], p) {
			continue // gpuform set it once: shown already
		}
		out = append(out, FieldDiff{Path: p, Op: FieldRemove, Before: v})
	}
	if len(out) > n {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	}
	return out
}

// hasPath reports whether fs has a difference at path p.
func hasPath(fs []FieldDiff, p string) bool {
	for _, f := range fs {
		if f.Path == p {
			return true
		}
	}
	return false
}

// ForeignPaths returns the fields of live that a field manager other than
// gpuform's server-side apply set (any managedFields entry but gpuform's
// Apply entry and the entries of the status subresource) and desired, the
// desired content, does not set: for each, the path of the outermost
// field desired lacks (spec.scopeSelector for a selector with
// expressions), each once, sorted. A field desired sets is not foreign
// even when another manager set it too: its value is compared as any
// other (DiffFields), and apply takes it over.
//
// Only the object's content counts: every top-level field but metadata
// and status, and of the metadata the owner references (the garbage
// collector deletes an object whose owners are gone). Labels and
// annotations weaken no control, and removing another controller's
// finalizer is not gpuform's to do; status is the controllers' report.
//
// Fields the API server defaults belong to no manager, so they are never
// foreign. The live object may be whole or as a refresh's metadata holds
// it: only its managedFields are read.
func ForeignPaths(live *unstructured.Unstructured, desired map[string]any) [][]string {
	md, _ := live.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	var leaves [][]string
	for _, e := range entries {
		mf, _ := e.(map[string]any)
		if mf["manager"] == FieldManager && mf["operation"] == string(metav1.ManagedFieldsOperationApply) && mf["subresource"] == nil {
			continue
		}
		if mf["subresource"] == "status" {
			continue
		}
		collectEntry(mf, desired, &leaves)
	}
	var out [][]string
	var seen map[string]bool
	for _, p := range leaves {
		if !contentPath(p) {
			continue
		}
		if p = outermostMissing(p, desired); p == nil {
			continue
		}
		key := strings.Join(p, "\x00")
		if seen[key] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[key] = true
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return FormatPath(out[i]) < FormatPath(out[j]) })
	return out
}

// ForeignFields is ForeignPaths less the fields live's content lacks (a
// managedFields entry may name a field that is gone): the fields another
// manager set that are there, to show and to remove.
func ForeignFields(live *unstructured.Unstructured, desired map[string]any) [][]string {
	paths := ForeignPaths(live, desired)
	kept := paths[:0]
	for _, p := range paths {
		if _, ok := getPath(live.Object, p); ok {
			kept = append(kept, p)
		}
	}
	return kept
}

// contentPath reports whether a field path is of an object's content as
// an object owned whole is compared (see ForeignPaths).
func contentPath(p []string) bool {
	switch {
	case len(p) == 0:
		return false
	case p[0] == "metadata":
		return len(p) > 1 && p[1] == "ownerReferences"
	}
	return p[0] != "status" && p[0] != "apiVersion" && p[0] != "kind"
}

// outermostMissing returns the part of path p down to the first field
// desired lacks; nil when desired sets p or a value that is not a map
// above it (which covers it).
func outermostMissing(p []string, desired map[string]any) []string {
	var cur any = desired
	for i, name := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		v, present := m[name]
		if !present {
			return p[:i+1]
		}
		cur = v
	}
	return nil
}
