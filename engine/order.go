package engine

import (
	"sort"
)

// applyRank orders kinds for apply: what others depend on comes first.
// Deletes run in the reverse order.
func applyRank(k Key) int {
	switch k.Group + "/" + k.Kind {
	case "/Namespace":
		return 0
	case "scheduling.k8s.io/PriorityClass":
		return 1
	case "kueue.x-k8s.io/WorkloadPriorityClass":
		return 2
	case "kueue.x-k8s.io/ResourceFlavor":
		return 3
	case "scheduling.volcano.sh/Queue":
		return 4
	case "/ConfigMap":
		return 5
	case "/ResourceQuota":
		return 6
	case "rbac.authorization.k8s.io/RoleBinding":
		return 7
	case "admissionregistration.k8s.io/ValidatingAdmissionPolicy":
		return 8
	case "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding":
		return 9
	case "kueue.x-k8s.io/ClusterQueue":
		return 10
	case "kueue.x-k8s.io/LocalQueue":
		return 11
	case "/Node":
		return 12
	case "serving.kserve.io/InferenceService":
		return 13
	}
	return 14
}

// order sorts applies (creates, updates, adoptions, conflicts) so that every
// change comes after the changes it depends on, then appends deletes in
// reverse dependency order (by kind rank: what lives in a namespace before the
// namespace; apply runs deletes rank by rank). Ties keep a stable, readable order: by kind rank,
// then address, then key.
func order(applies, deletes []*Change) []*Change {
	less := func(a, b *Change) bool {
		ra, rb := applyRank(a.Key), applyRank(b.Key)
		if ra != rb {
			return ra < rb
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Key.Less(b.Key)
	}
	sort.SliceStable(applies, func(i, j int) bool { return less(applies[i], applies[j]) })
	byKey := make(map[Key]*Change, len(applies))
	for _, c := range applies {
		byKey[c.Key] = c
	}
	out := make([]*Change, 0, len(applies)+len(deletes))
	done := make(map[*Change]bool, len(applies))
	visiting := make(map[*Change]bool)
	var visit func(c *Change)
	visit = func(c *Change) {
		if done[c] || visiting[c] {
			return
		}
		visiting[c] = true
		for _, d := range c.DependsOn {
			if dc, ok := byKey[d]; ok {
				visit(dc)
			}
		}
		visiting[c] = false
		done[c] = true
		out = append(out, c)
	}
	for _, c := range applies {
		visit(c)
	}
	sort.SliceStable(deletes, func(i, j int) bool {
		ri, rj := applyRank(deletes[i].Key), applyRank(deletes[j].Key)
		if ri != rj {
			return ri > rj
		}
		return deletes[i].Key.Less(deletes[j].Key)
	})
	return append(out, deletes...)
}
