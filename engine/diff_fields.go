package engine

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ignoredMeta reports whether a metadata field is the object's identity.
func ignoredMeta(field string) bool { return field == "name" || field == "namespace" }

// DiffFields compares the fields of desired with live: every field desired
// sets, plus every field gpuform owned in live (managedFields) that desired
// no longer sets.
func DiffFields(desired map[string]any, live *unstructured.Unstructured, manager string) []FieldDiff {
	var out []FieldDiff
	lk := &listKeys{gvk: live.GroupVersionKind()}
	walkDesired(make([]string, 0, 8), desired, live.Object, lk, &out)
	for _, path := range removedPaths(live, desired, manager) {
		if isCommitStamp(path) {
			continue
		}
		v, ok := getPath(live.Object, path)
		if !ok {
			continue
		}
		out = append(out, FieldDiff{Path: FormatPath(path), Op: FieldRemove, Before: v})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// walkDesired appends to out the differences of have from want below path.
// Paths share one backing array (callers format them, never keep them), and
// keys are visited in map order: DiffFields sorts the result.
func walkDesired(path []string, want map[string]any, have map[string]any, lk *listKeys, out *[]FieldDiff) {
	for k, w := range want {
		walkKey(path, k, w, have, lk, out)
	}
}

// skippedKey reports whether the desired field k below path is never
// compared: apiVersion, kind and status at the root, the object's identity
// in metadata, and the commit stamp.
func skippedKey(path []string, k string) bool {
	switch {
	case len(path) == 0:
		return k == "apiVersion" || k == "kind" || k == "status"
	case len(path) == 1 && path[0] == "metadata":
		return ignoredMeta(k)
	case len(path) == 2 && path[0] == "metadata" && path[1] == "annotations":
		return k == AnnotCommit
	}
	return false
}

// walkKey appends to out the differences of have's field k from w, the
// desired value of k below path.
func walkKey(path []string, k string, w any, have map[string]any, lk *listKeys, out *[]FieldDiff) {
	if skippedKey(path, k) {
		return
	}
	p := append(path, k)
	h, present := have[k]
	if wm, ok := w.(map[string]any); ok {
		hm, _ := h.(map[string]any)
		if !present || hm == nil {
			if len(wm) != 0 {
				*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldAdd, After: w})
			}
			return
		}
		walkDesired(p, wm, hm, lk, out)
		return
	}
	if !present {
		if !isZero(w) { // the server drops zero values it defaults (omitempty)
			*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldAdd, After: w})
		}
		return
	}
	walkValue(p, w, h, lk, out)
}

// walkValue appends to out the difference of the live value h at path from
// w, a desired value that is not a map.
func walkValue(p []string, w, h any, lk *listKeys, out *[]FieldDiff) {
	if wl, ok := w.([]any); ok {
		if hl, ok := h.([]any); ok && len(wl) == len(hl) && hasMaps(wl) {
			walkList(p, wl, hl, lk, out)
			return
		}
	}
	if !equalDesired(w, h) {
		*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldChange, Before: h, After: w})
	}
}

// isCommitStamp reports whether path is the gpuform.dev/commit annotation,
// which records the commit of the last apply: it is written with every
// change but is not itself a change (drift reads it).
func isCommitStamp(path []string) bool {
	return len(path) == 3 && path[0] == "metadata" && path[1] == "annotations" && path[2] == AnnotCommit
}

// walkList compares two lists of objects of the same length element by
// element, so a change deep in a list shows with its own path: each
// element named by its keys when the list has keys (flavors[h100]), else
// by its index ([0]). The keys are looked up only for a list with a
// change, which it then walks again: most lists of a plan have none.
func walkList(path []string, want, have []any, lk *listKeys, out *[]FieldDiff) {
	start := len(*out)
	walkElements(path, want, have, nil, lk, out)
	if len(*out) == start {
		return
	}
	if labels := lk.keyed(path, want); labels != nil {
		*out = (*out)[:start]
		walkElements(path, want, have, labels, lk, out)
	}
}

// walkElements is walkList with each element's path element given by
// labels, or its index when labels is nil.
func walkElements(path []string, want, have []any, labels []string, lk *listKeys, out *[]FieldDiff) {
	for i := range want {
		label := "[" + strconv.Itoa(i) + "]"
		if labels != nil {
			label = labels[i]
		}
		p := append(path, label)
		wm, wok := want[i].(map[string]any)
		hm, hok := have[i].(map[string]any)
		if wok && hok {
			walkDesired(p, wm, hm, lk, out)
			continue
		}
		if !equalDesired(want[i], have[i]) {
			*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldChange, Before: have[i], After: want[i]})
		}
	}
}

func hasMaps(l []any) bool {
	return slices.ContainsFunc(l, func(e any) bool { _, ok := e.(map[string]any); return ok })
}

// isZero reports whether v is false, 0 or "".
func isZero(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return x == ""
	}
	f, ok := toFloat(v)
	return ok && f == 0
}

// equalDesired reports whether live value h has every field of desired value
// w, with numbers and quantities compared by value.
func equalDesired(w, h any) bool {
	switch wv := w.(type) {
	case map[string]any:
		hv, ok := h.(map[string]any)
		if !ok {
			return len(wv) == 0 && h == nil
		}
		for k, x := range wv {
			if !equalDesired(x, hv[k]) {
				return false
			}
		}
		return true
	case []any:
		hv, ok := h.([]any)
		if !ok || len(hv) != len(wv) {
			return len(wv) == 0 && h == nil
		}
		for i := range wv {
			if !equalDesired(wv[i], hv[i]) {
				return false
			}
		}
		return true
	case string:
		hs, ok := h.(string)
		if !ok {
			return false
		}
		if wv == hs {
			return true
		}
		wq, err1 := resource.ParseQuantity(wv)
		hq, err2 := resource.ParseQuantity(hs)
		return err1 == nil && err2 == nil && wq.Cmp(hq) == 0
	}
	if wf, ok := toFloat(w); ok {
		hf, ok := toFloat(h)
		return ok && wf == hf
	}
	return w == h
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// removedPaths returns the leaf field paths that manager applied in live
// (its managedFields) and desired no longer sets: absent from desired and
// not under a desired value that is not a map (an atomic list or scalar
// covering it). Lists are atomic: a path stops at a list. It descends the
// managed-fields tree along desired, so fields still set cost no
// allocation.
func removedPaths(live *unstructured.Unstructured, desired map[string]any, manager string) [][]string {
	// The managed fields are read where they lie in the unstructured
	// content: GetManagedFields converts every entry to its typed form and
	// its fieldsV1 back to JSON, which cost more than the rest of the diff.
	md, _ := live.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	var out [][]string
	for _, e := range entries {
		mf, _ := e.(map[string]any)
		if mf["manager"] != manager || mf["operation"] != string(metav1.ManagedFieldsOperationApply) {
			continue
		}
		collectEntry(mf, desired, &out)
	}
	return out
}

// collectEntry appends to out the leaf field paths of the managedFields
// entry mf that desired does not set (see removedPaths). Its fieldsV1 is
// JSON as refresh keeps it, or a tree of maps (a fake clientset's, the
// simulated cluster's), which is walked as its JSON.
func collectEntry(mf, desired map[string]any, out *[][]string) {
	var fs fieldsScanner
	switch tree := mf["fieldsV1"].(type) {
	case string:
		fs.b = tree
	case map[string]any:
		b, err := json.Marshal(tree)
		if err != nil {
			return
		}
		fs.b = string(b)
	default:
		return
	}
	fs.collectRemoved(make([]string, 0, 8), desired, out)
}

// getPath returns the value of m at path.
func getPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = mm[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// FormatPath renders a field path: identifiers joined by dots, other keys
// in brackets (spec.hard["requests.nvidia.com/gpu"]), list elements by
// index or keys as walkList names them (flavors[h100], containers[0]).
func FormatPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if isIndex(p) {
			b.WriteString(p)
			continue
		}
		if e, ok := strings.CutPrefix(p, listElement); ok {
			b.WriteString(e)
			continue
		}
		if isIdent(p) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
			continue
		}
		b.WriteString("[" + strconv.Quote(p) + "]")
	}
	return b.String()
}

// isIndex reports whether a path element is a list index, "[3]".
func isIndex(s string) bool {
	if len(s) < 3 || s[0] != '[' || s[len(s)-1] != ']' {
		return false
	}
	_, err := strconv.Atoi(s[1 : len(s)-1])
	return err == nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}
