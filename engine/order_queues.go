package engine

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Volcano's Queue admission webhook checks a Queue of a tree against the
// Queues around it as they are when it is written: a Queue's capability
// within its nearest ancestor's, the deserved of a parent's children within
// the parent's, a parent's capability and deserved over its children's.
// Compiled, a Queue waits for its parent's, which suits a tree that grows;
// one that shrinks would be refused at the parent, above children not yet
// lowered, and a rerun would be refused the same way.
//
// queuesShrinkFirst reorders the creates and updates of Volcano Queues in
// changes (d's desired Queues give the tree) so that every write fits the
// Queues already written:
//   - a Queue update that only lowers figures no longer waits for its
//     parent's update, and every ancestor's update waits for it instead
//     (descendants lowered first);
//   - a Queue that raises a figure, or is created, waits for the updates of
//     its ancestors that raise one, and for those of its siblings that only
//     lower theirs (room made before it is taken).
//
// Only Queues that raise a figure ever wait for others that do, and then
// only for ancestors, so the order has no cycle. A Queue that raises one
// figure and lowers another keeps its parent-first order. Each change's
// DependsOn is copied before it is changed: it is the desired object's.
func queuesShrinkFirst(d *Desired, changes []*Change) {
	type queue struct {
		c          *Change
		shrinkOnly bool
	}
	parentOf := map[string]string{}
	for _, o := range d.Objects {
		if isVolcanoQueue(o.Key()) {
			parentOf[o.Object.GetName()], _, _ = unstructured.NestedString(o.Object.Object, "spec", "parent")
		}
	}
	byName := map[string]*queue{}
	var queues []*queue
	for _, c := range changes {
		if !isVolcanoQueue(c.Key) || c.After == nil || (c.Action != ActionCreate && c.Action != ActionUpdate) {
			continue
		}
		q := &queue{c: c}
		if c.Action == ActionUpdate && c.Before != nil {
			before, _, _ := unstructured.NestedString(c.Before.Object, "spec", "parent")
			lowers, raises := queueDirection(c.Before.Object, c.After.Object)
			q.shrinkOnly = lowers && !raises && before == parentOf[c.Key.Name]
		}
		byName[c.Key.Name] = q
		queues = append(queues, q)
	}
	dependOn := func(c *Change, k Key) {
		if !slices.Contains(c.DependsOn, k) {
			c.DependsOn = append(slices.Clone(c.DependsOn), k)
		}
	}
	ancestors := func(name string) []string {
		var out []string
		for p := parentOf[name]; p != "" && p != volcanoRootQueue && len(out) <= len(parentOf); p = parentOf[p] {
			out = append(out, p)
		}
		return out
	}
	for _, q := range queues {
		for _, name := range ancestors(q.c.Key.Name) {
			a := byName[name]
			switch {
			case a == nil:
			case q.shrinkOnly && a.c.Action == ActionUpdate:
				q.c.DependsOn = slices.DeleteFunc(slices.Clone(q.c.DependsOn), func(k Key) bool { return k == a.c.Key })
				dependOn(a.c, q.c.Key)
			case !q.shrinkOnly && !a.shrinkOnly:
				dependOn(q.c, a.c.Key)
			}
		}
		if q.shrinkOnly {
			continue
		}
		for _, s := range queues {
			if p := parentOf[q.c.Key.Name]; s != q && s.shrinkOnly && parentOf[s.c.Key.Name] == p && p != "" && p != volcanoRootQueue {
				dependOn(q.c, s.c.Key)
			}
		}
	}
}

// isVolcanoQueue reports whether k is a Volcano Queue.
func isVolcanoQueue(k Key) bool {
	return k.Group == KindVolcanoQueue.Group && k.Kind == KindVolcanoQueue.Kind
}

// volcanoRootQueue is the Queue Volcano keeps at the top of every tree; the
// webhook checks nothing against it.
const volcanoRootQueue = "root"

// queueDirection reports whether a Queue's figures go down (lowers) or up
// (raises) from before to after: spec.capability (a resource it does not
// name is unbounded), spec.deserved and spec.guarantee.resource (one they do
// not name is zero). A figure that does not parse counts both ways.
func queueDirection(before, after map[string]any) (lowers, raises bool) {
	compare := func(path []string, absentIsUnbounded bool) {
		b, _, _ := unstructured.NestedMap(before, path...)
		a, _, _ := unstructured.NestedMap(after, path...)
		for _, r := range unionKeys(b, a) {
			bq, bok := parseQuantity(b[r])
			aq, aok := parseQuantity(a[r])
			switch {
			case b[r] != nil && !bok, a[r] != nil && !aok:
				lowers, raises = true, true
			case b[r] == nil && a[r] == nil:
			case b[r] == nil:
				if absentIsUnbounded {
					lowers = true
				} else if aq.Sign() > 0 {
					raises = true
				}
			case a[r] == nil:
				if absentIsUnbounded {
					raises = true
				} else if bq.Sign() > 0 {
					lowers = true
				}
			default:
				switch aq.Cmp(bq) {
				case -1:
					lowers = true
				case 1:
					raises = true
				}
			}
		}
	}
	compare([]string{"spec", "capability"}, true)
	compare([]string{"spec", "deserved"}, false)
	compare([]string{"spec", "guarantee", "resource"}, false)
	return lowers, raises
}

// parseQuantity reads a Queue figure, a quantity string as gpuform writes
// it; ok is false when v is absent, another type, or does not parse.
func parseQuantity(v any) (resource.Quantity, bool) {
	s, ok := v.(string)
	if !ok {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// unionKeys returns the keys of a and b, sorted.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
