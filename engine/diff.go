package engine

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DiffOptions tune Diff.
type DiffOptions struct {
	// Adopt plans to take over unmanaged objects in the way instead of
	// reporting them as conflicts.
	Adopt bool
}

// Diff compares the desired state with the live one and returns the ordered
// plan. Only fields gpuform sets are compared, so server defaults never show
// as changes; fields gpuform set before (managedFields) and no longer sets
// show as removed.
func Diff(d *Desired, live *Live, opts DiffOptions) (*Plan, error) {
	if err := missingKinds(d, live); err != nil {
		return nil, err
	}
	p := &Plan{Stack: d.Stack, Source: live.Source, ReadVersions: map[Key]string{}}
	for k, u := range live.Objects {
		p.ReadVersions[k] = ReadVersion(u)
	}
	for k, u := range live.Foreign {
		p.ReadVersions[k] = ReadVersion(u)
	}
	var changes []*Change
	fields := diffObjects(d.Objects, live.Objects)
	for i, o := range d.Objects {
		k := o.Key()
		c := &Change{Address: o.Address, Key: k, APIVersion: o.Object.GetAPIVersion(), After: o.Object, DependsOn: o.DependsOn, Sensitive: o.Sensitive}
		if cur, ok := live.Objects[k]; ok {
			c.Before = cur
			c.Fields = fields[i]
			if len(c.Fields) == 0 {
				p.Summary.Unchanged++
				continue
			}
			c.Action = ActionUpdate
		} else if cur, ok := live.Foreign[k]; ok {
			c.Before = cur
			if opts.Adopt {
				c.Action = ActionAdopt
				c.Fields = DiffFields(o.Object.Object, cur, FieldManager)
			} else {
				c.Action = ActionConflict
				c.Reason = fmt.Sprintf("%s already exists and is not managed by this stack (owner: %s); run with --adopt to take it over, or rename it in the configuration", k, Owner(cur))
			}
		} else {
			c.Action = ActionCreate
		}
		changes = append(changes, c)
	}
	nodeChanges, err := DiffNodes(d, live, opts)
	if err != nil {
		return nil, err
	}
	for _, n := range live.Nodes {
		p.ReadVersions[KeyOf(n)] = NodeVersion(n)
	}
	changes = append(changes, nodeChanges...)
	policyChanges, warnings, err := DiffClusterPolicies(d, live)
	if err != nil {
		return nil, err
	}
	changes = append(changes, policyChanges...)
	p.Warnings = append(p.Warnings, warnings...)
	for _, cp := range live.ClusterPolicies {
		p.ReadVersions[KeyOf(cp)] = cp.GetResourceVersion()
	}
	waitForNodes(changes, d)
	p.Throttles = map[string]int{}
	for _, np := range d.Pools {
		if np.MaxUnavailable > 0 {
			p.Throttles[np.Address] = np.MaxUnavailable
		}
	}
	desired := d.index()
	var deletes []*Change
	for k, u := range live.Objects {
		if _, ok := desired[k]; ok || u.GetDeletionTimestamp() != nil {
			continue // wanted, or already being deleted (a terminating Namespace)
		}
		deletes = append(deletes, &Change{
			Address:    u.GetAnnotations()[AnnotAddress],
			Key:        k,
			APIVersion: u.GetAPIVersion(),
			Action:     ActionDelete,
			Before:     u,
		})
	}
	p.Changes = order(changes, deletes)
	for _, c := range p.Changes {
		switch c.Action {
		case ActionCreate:
			p.Summary.Add++
		case ActionUpdate, ActionAdopt:
			p.Summary.Change++
		case ActionDelete:
			p.Summary.Destroy++
		case ActionConflict:
			p.Summary.Conflicts++
		}
	}
	return p, nil
}

// diffObjectsBatch is the fewest objects worth a goroutine of diffObjects.
const diffObjectsBatch = 512

// diffObjects returns DiffFields of every desired object against its live
// copy in the stack (nil where there is none), index by index, computed on
// every processor: comparing the fields is most of a large diff's time.
func diffObjects(objs []*Object, live map[Key]*unstructured.Unstructured) [][]FieldDiff {
	out := make([][]FieldDiff, len(objs))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(objs)/diffObjectsBatch))
	per := (len(objs) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(objs); lo += per {
		hi := min(lo+per, len(objs))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if cur, ok := live[objs[i].Key()]; ok {
					out[i] = DiffFields(objs[i].Object.Object, cur, FieldManager)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// missingKinds fails when a desired object needs a kind the cluster lacks.
func missingKinds(d *Desired, live *Live) error {
	if len(live.MissingKinds) == 0 {
		return nil
	}
	missing := map[string]Kind{}
	for _, k := range live.MissingKinds {
		missing[k.Group+"/"+k.Kind] = k
	}
	var msgs []string
	seen := map[string]bool{}
	for _, o := range d.Objects {
		gvk := o.Object.GroupVersionKind()
		k, ok := missing[gvk.Group+"/"+gvk.Kind]
		if !ok || seen[o.Address+k.Kind] {
			continue
		}
		seen[o.Address+k.Kind] = true
		msgs = append(msgs, fmt.Sprintf("%s needs %s (%s), which this cluster does not serve: %s", o.Address, k.Kind, k.GroupVersion(), installHint(k)))
	}
	if len(msgs) == 0 {
		return nil
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("... and %d more", len(msgs)-5))
	}
	return &MissingKindError{Messages: msgs}
}

// MissingKindError says which blocks need a CRD the cluster does not have.
type MissingKindError struct{ Messages []string }

func (e *MissingKindError) Error() string {
	return "the cluster lacks API kinds the configuration needs:\n  " + strings.Join(e.Messages, "\n  ")
}

func installHint(k Kind) string {
	switch k.Group {
	case "kueue.x-k8s.io":
		return "install Kueue (https://kueue.sigs.k8s.io) or set scheduler = \"none\" in the gpuform block"
	case "scheduling.volcano.sh":
		return "install Volcano or set scheduler = \"none\" in the gpuform block"
	case "serving.kserve.io":
		return "install KServe (https://kserve.github.io), or remove the model blocks"
	case "nvidia.com":
		return "install the NVIDIA GPU Operator"
	}
	return "install the CRD that serves it"
}

// DiffNodes computes the label and annotation changes pools ask of Nodes.
func DiffNodes(d *Desired, live *Live, opts DiffOptions) ([]*Change, error) {
	var out []*Change
	for _, n := range live.Nodes {
		var pools []*NodePool
		for _, np := range d.Pools {
			if Selects(np.Selector, n.GetLabels()) {
				pools = append(pools, np)
			}
		}
		if len(pools) > 1 {
			return nil, fmt.Errorf("node %s is selected by both %s and %s; a node belongs to one pool, so make their node_selector disjoint", n.GetName(), pools[0].Address, pools[1].Address)
		}
		want := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": n.GetName()},
		}}
		address := ""
		var deps []Key
		if len(pools) == 1 {
			np := pools[0]
			address, deps = np.Address, np.DependsOn
			meta := want.Object["metadata"].(map[string]any)
			if len(np.Labels) > 0 {
				meta["labels"] = stringMapAny(np.Labels)
			}
			if len(np.Annotations) > 0 {
				meta["annotations"] = stringMapAny(np.Annotations)
			}
		}
		manager := NodeFieldManager(d.Stack)
		fields := DiffFields(want.Object, n, manager)
		if len(fields) == 0 && len(pools) == 1 {
			fields = unfinishedMIG(pools[0], n)
		}
		if len(fields) == 0 {
			continue
		}
		if address == "" {
			address = "pool (removed)"
		}
		c := &Change{Address: address, Key: KeyOf(n), APIVersion: "v1", Action: ActionUpdate, Before: n, After: want, Fields: fields, DependsOn: deps}
		if len(pools) == 1 && pools[0].MIGState != "" && (migChanged(fields) || fields[0].Path == MIGStatePath(pools[0].MIGState)) {
			c.Wait = pools[0].MIGState
			c.Throttle = pools[0].Address
		}
		if other := otherPoolOwner(n, manager); other != "" && address != "pool (removed)" {
			if opts.Adopt {
				c.Action = ActionAdopt
			} else {
				c.Action, c.Fields = ActionConflict, nil
				c.Reason = fmt.Sprintf("node %s is already in a pool of gpuform stack %s (its %s label is owned by field manager %s); a node belongs to one pool of one stack, so narrow this pool's node_selector, or run with --adopt to move the node", n.GetName(), strings.TrimPrefix(other, nodeManagerPrefix), LabelPool, other)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// unfinishedMIG is the change a node needs when its layout is in place but
// its MIG state is not "success" (an earlier apply failed or is pending):
// apply marks it pending again and waits, so that models are not placed on
// slices that do not exist.
func unfinishedMIG(np *NodePool, n *unstructured.Unstructured) []FieldDiff {
	if np.MIGState == "" {
		return nil
	}
	state, ok := n.GetLabels()[np.MIGState]
	if np.MIGState == AnnotMIGState {
		state, ok = n.GetAnnotations()[np.MIGState]
	}
	if !ok || state == "success" {
		return nil
	}
	return []FieldDiff{{Path: MIGStatePath(np.MIGState), Op: FieldChange, Before: state, After: "success"}}
}

// MIGStatePath is the field path of a MIG state label or annotation.
func MIGStatePath(key string) string {
	if key == AnnotMIGState {
		return FormatPath([]string{"metadata", "annotations", key})
	}
	return FormatPath([]string{"metadata", "labels", key})
}

// migChanged reports whether a node change touches its MIG layout.
func migChanged(fields []FieldDiff) bool {
	for _, f := range fields {
		if f.Op == FieldRemove {
			continue
		}
		if strings.Contains(f.Path, LabelMIGConfig+`"`) || strings.Contains(f.Path, AnnotMIGLayout) {
			return true
		}
		if m, ok := f.After.(map[string]any); ok {
			_, label := m[LabelMIGConfig]
			_, annotation := m[AnnotMIGLayout]
			if label || annotation {
				return true
			}
		}
	}
	return false
}

// waitForNodes makes models on a pool depend on the re-partitioning of the
// pool's nodes, so they are applied once their MIG slices exist.
func waitForNodes(changes []*Change, d *Desired) {
	repartitioned := map[string][]Key{}
	for _, c := range changes {
		if c.Wait != "" {
			for _, np := range d.Pools {
				if np.Address == c.Address {
					repartitioned[np.Pool] = append(repartitioned[np.Pool], c.Key)
				}
			}
		}
	}
	if len(repartitioned) == 0 {
		return
	}
	for _, c := range changes {
		if c.After == nil || c.Key.Kind != "InferenceService" {
			continue
		}
		pool, _, _ := unstructured.NestedString(c.After.Object, "spec", "predictor", "nodeSelector", LabelPool)
		c.DependsOn = append(c.DependsOn, repartitioned[pool]...)
	}
}

// nodeManagerPrefix starts the field manager of every stack's node labels.
const nodeManagerPrefix = "gpuform-"

// NodeFieldManager is the field manager of a stack's labels on Nodes: one
// per stack, so that two stacks claiming one node conflict instead of
// silently taking turns.
func NodeFieldManager(stack string) string { return nodeManagerPrefix + stack }

// otherPoolOwner returns the field manager of another stack that owns the
// node's pool label, or "".
func otherPoolOwner(n *unstructured.Unstructured, mine string) string {
	for _, mf := range n.GetManagedFields() {
		if mf.Manager == mine || !strings.HasPrefix(mf.Manager, nodeManagerPrefix) || mf.FieldsV1 == nil {
			continue
		}
		if strings.Contains(string(mf.FieldsV1.Raw), `"f:`+LabelPool+`"`) {
			return mf.Manager
		}
	}
	return ""
}

// Selects reports whether a node with labels is selected by sel: sel is
// not empty and every one of its labels matches.
func Selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func stringMapAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ignoredMeta reports whether a metadata field is the object's identity.
func ignoredMeta(field string) bool { return field == "name" || field == "namespace" }

// DiffFields compares the fields of desired with live: every field desired
// sets, plus every field gpuform owned in live (managedFields) that desired
// no longer sets.
func DiffFields(desired map[string]any, live *unstructured.Unstructured, manager string) []FieldDiff {
	var out []FieldDiff
	walkDesired(make([]string, 0, 8), desired, live.Object, &out)
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
func walkDesired(path []string, want map[string]any, have map[string]any, out *[]FieldDiff) {
	for k, w := range want {
		p := append(path, k)
		if len(path) == 0 && (k == "apiVersion" || k == "kind" || k == "status") {
			continue
		}
		if len(path) == 1 && path[0] == "metadata" && ignoredMeta(k) {
			continue
		}
		if isCommitStamp(p) {
			continue
		}
		h, present := have[k]
		if wm, ok := w.(map[string]any); ok {
			hm, _ := h.(map[string]any)
			if !present || hm == nil {
				if len(wm) == 0 {
					continue
				}
				*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldAdd, After: w})
				continue
			}
			walkDesired(p, wm, hm, out)
			continue
		}
		if !present {
			if isZero(w) {
				continue // the server drops zero values it defaults (omitempty)
			}
			*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldAdd, After: w})
			continue
		}
		if wl, ok := w.([]any); ok {
			if hl, ok := h.([]any); ok && len(wl) == len(hl) && hasMaps(wl) {
				walkList(p, wl, hl, out)
				continue
			}
		}
		if !equalDesired(w, h) {
			*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldChange, Before: h, After: w})
		}
	}
}

// isCommitStamp reports whether path is the gpuform.dev/commit annotation,
// which records the commit of the last apply: it is written with every
// change but is not itself a change (drift reads it).
func isCommitStamp(path []string) bool {
	return len(path) == 3 && path[0] == "metadata" && path[1] == "annotations" && path[2] == AnnotCommit
}

// walkList compares two lists of objects of the same length element by
// element, so a change deep in a list shows with its own path.
func walkList(path []string, want, have []any, out *[]FieldDiff) {
	for i := range want {
		p := append(path, "["+strconv.Itoa(i)+"]")
		wm, wok := want[i].(map[string]any)
		hm, hok := have[i].(map[string]any)
		if wok && hok {
			walkDesired(p, wm, hm, out)
			continue
		}
		if !equalDesired(want[i], have[i]) {
			*out = append(*out, FieldDiff{Path: FormatPath(p), Op: FieldChange, Before: have[i], After: want[i]})
		}
	}
}

func hasMaps(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); ok {
			return true
		}
	}
	return false
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
		switch tree := mf["fieldsV1"].(type) {
		case map[string]any:
			collectRemoved(make([]string, 0, 8), tree, desired, &out)
		case *metav1.FieldsV1:
			if tree != nil {
				fs := fieldsScanner{b: tree.Raw}
				fs.collectRemoved(make([][]byte, 0, 8), desired, &out)
			}
		}
	}
	return out
}

// collectRemoved walks the managed-fields tree below path alongside
// desired (the desired value at path, a map).
func collectRemoved(path []string, tree, desired map[string]any, out *[][]string) {
	for k, v := range tree {
		if !strings.HasPrefix(k, "f:") {
			continue // ".", or list element keys k:/v:/i: — lists are compared whole
		}
		name := k[2:]
		if len(path) == 1 && path[0] == "metadata" && ignoredMeta(name) {
			continue
		}
		sub, _ := v.(map[string]any)
		d, present := desired[name]
		if !present {
			collectOwned(append(path, name), sub, out)
			continue
		}
		if dm, ok := d.(map[string]any); ok {
			collectRemoved(append(path, name), sub, dm, out)
		}
		// A scalar or list in desired covers everything below it.
	}
}

// collectOwned appends every leaf path of tree below path to out, each in
// its own slice.
func collectOwned(path []string, tree map[string]any, out *[][]string) {
	leaf := true
	for k, v := range tree {
		if !strings.HasPrefix(k, "f:") {
			continue // ".", or list element keys k:/v:/i: — lists are compared whole
		}
		leaf = false
		name := k[2:]
		if len(path) == 1 && path[0] == "metadata" && ignoredMeta(name) {
			continue
		}
		sub, _ := v.(map[string]any)
		collectOwned(append(path, name), sub, out)
	}
	if leaf && len(path) > 0 {
		*out = append(*out, append([]string(nil), path...))
	}
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
// in brackets (spec.hard["requests.nvidia.com/gpu"]).
func FormatPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if isIndex(p) {
			b.WriteString(p)
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

// DiffClusterPolicies returns the changes that point the GPU Operator at
// gpuform's mig-parted and device-plugin ConfigMaps, and warnings. With MIG
// or time-slicing pools on the gpu-operator backend, a cluster without a
// ClusterPolicy is an error.
func DiffClusterPolicies(d *Desired, live *Live) ([]*Change, []string, error) {
	want := map[string]string{} // spec path component -> ConfigMap name
	var needers []string
	for _, o := range d.Objects {
		switch o.Key() {
		case Key{Kind: "ConfigMap", Namespace: o.Object.GetNamespace(), Name: MIGPartedConfig}:
			want["migManager"] = MIGPartedConfig
		case Key{Kind: "ConfigMap", Namespace: o.Object.GetNamespace(), Name: DevicePluginConf}:
			want["devicePlugin"] = DevicePluginConf
		}
	}
	if len(want) == 0 {
		return nil, nil, nil
	}
	for _, np := range d.Pools {
		if np.MIGState == LabelMIGState || np.Labels[LabelDPConfig] != "" {
			needers = append(needers, np.Address)
		}
	}
	if len(live.ClusterPolicies) == 0 {
		verb := "needs"
		if len(needers) > 1 {
			verb = "need"
		}
		return nil, nil, fmt.Errorf("%s %s the NVIDIA GPU Operator (mig_backend = \"gpu-operator\"), but the cluster has no ClusterPolicy: install the GPU Operator, or set mig_backend = \"agent\" in the gpuform block and deploy examples/deploy/agent.yaml", strings.Join(needers, ", "), verb)
	}
	var out []*Change
	var warnings []string
	for _, cp := range live.ClusterPolicies {
		spec := map[string]any{}
		for component, name := range want {
			spec[component] = map[string]any{"config": map[string]any{"name": name}}
			if cur, _, _ := unstructured.NestedString(cp.Object, "spec", component, "config", "name"); cur != "" && cur != name {
				warnings = append(warnings, fmt.Sprintf("ClusterPolicy %s points %s at ConfigMap %q; gpuform will point it at %q, where the configuration's layouts are", cp.GetName(), component, cur, name))
			}
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": cp.GetAPIVersion(), "kind": cp.GetKind(),
			"metadata": map[string]any{"name": cp.GetName()},
			"spec":     spec,
		}}
		fields := DiffFields(obj.Object, cp, FieldManager)
		if len(fields) == 0 {
			continue
		}
		out = append(out, &Change{Address: StackAddress, Key: KeyOf(cp), APIVersion: cp.GetAPIVersion(), Action: ActionUpdate, Before: cp, After: obj, Fields: fields,
			DependsOn: []Key{{Kind: "ConfigMap", Namespace: d.gpuOperatorNamespace(), Name: want["migManager"]}}})
	}
	return out, warnings, nil
}
