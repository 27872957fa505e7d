package engine

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/kinds"
)

// DiffOwned is DiffFields of a live object of the stack against its desired
// content, as plan, settle and drift compare them: for a kind the registry
// owns whole (kinds.Entry.OwnedWhole) it adds, as removed, every field
// another field manager set that desired does not (ForeignFields), so that
// a scope selector someone added to a tenant's quota is a change, not
// "No changes"; and, as changed, every field desired sets that another
// manager took from gpuform (TakenPaths).
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
	for _, path := range TakenPaths(live, desired) {
		v, ok := getPath(live.Object, path)
		w, _ := getPath(desired, path)
		p := FormatPath(path)
		if hasPath(out[:n], p) {
			continue
		}
		if !ok {
			out = append(out, FieldDiff{Path: p, Op: FieldAdd, After: w})
			continue
		}
		out = append(out, FieldDiff{Path: p, Op: FieldChange, Before: v, After: w})
	}
	if len(out) > n {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	}
	return out
}

// hasPath reports whether fs has a difference at path p.
func hasPath(fs []FieldDiff, p string) bool {
	return slices.ContainsFunc(fs, func(f FieldDiff) bool { return f.Path == p })
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

// TakenPaths returns the fields desired sets that another field manager
// took from gpuform: owned by a manager other than gpuform's apply (not
// the status subresource's), whole (an atomic map or list, or a scalar),
// and no longer by gpuform's apply entry. A manager that forces its own
// value of an atomic field (a binding's matchResources) takes it from
// gpuform, and what it adds inside does not show as a difference of the
// fields gpuform sets; applying with force takes it back whole. Each path
// once, sorted; only the managedFields of live are read.
func TakenPaths(live *unstructured.Unstructured, desired map[string]any) [][]string {
	md, _ := live.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	var taken [][]string
	var oursEntry map[string]any
	for _, e := range entries {
		mf, _ := e.(map[string]any)
		if mf["manager"] == FieldManager && mf["operation"] == string(metav1.ManagedFieldsOperationApply) && mf["subresource"] == nil {
			oursEntry = mf
			continue
		}
		if mf["subresource"] == "status" {
			continue
		}
		collectTaken(make([]string, 0, 8), fieldsTree(mf), desired, &taken)
	}
	if len(taken) == 0 {
		// Most objects: only gpuform's entry, whose field set (JSON as a
		// refresh keeps it) need not be decoded.
		return nil
	}
	ours := fieldsTree(oursEntry)
	var out [][]string
	seen := map[string]bool{}
	for _, p := range taken {
		key := strings.Join(p, "\x00")
		if !contentPath(p) || seen[key] || ownsPath(ours, p) {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return FormatPath(out[i]) < FormatPath(out[j]) })
	return out
}

// fieldsTree returns the fieldsV1 tree of a managedFields entry as maps,
// decoding it where a refresh kept it as JSON; nil when it has none.
func fieldsTree(mf map[string]any) map[string]any {
	switch tree := mf["fieldsV1"].(type) {
	case map[string]any:
		return tree
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(tree), &m) != nil {
			return nil
		}
		return m
	}
	return nil
}

// collectTaken appends to out the paths below path where tree, a managed
// fields tree, owns a value desired sets whole: a node without fields of
// its own at a field desired sets.
func collectTaken(path []string, tree, desired map[string]any, out *[][]string) {
	for k, v := range tree {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue
		}
		d, present := desired[name]
		if !present {
			continue // not desired: ForeignPaths
		}
		sub, _ := v.(map[string]any)
		p := append(path, name)
		if dm, isMap := d.(map[string]any); isMap && hasFields(sub) {
			collectTaken(p, sub, dm, out)
			continue
		}
		if dm, isMap := d.(map[string]any); isMap && len(sub) > 0 && len(dm) > 0 {
			continue // ".": the map's presence, its fields each owned apart
		}
		*out = append(*out, append([]string(nil), p...))
	}
}

// hasFields reports whether a managed fields tree names fields ("f:").
func hasFields(tree map[string]any) bool {
	for k := range tree {
		if strings.HasPrefix(k, "f:") {
			return true
		}
	}
	return false
}

// ownsPath reports whether the managed fields tree holds path, as a leaf
// or above fields of its own.
func ownsPath(tree map[string]any, path []string) bool {
	cur := tree
	for _, name := range path {
		sub, ok := cur["f:"+name]
		if !ok {
			return false
		}
		cur, _ = sub.(map[string]any)
	}
	return true
}
