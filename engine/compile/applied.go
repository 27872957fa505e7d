package compile

import (
	"iter"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// AppliedQuota is the GPU quota the stack's applied objects claim, by
// resource, as cfg's scheduler backend reads the objects it writes quota
// into (Scheduler.Applied); where none of those were applied yet (the
// first apply under that scheduler), the ResourceQuotas every stack writes.
// objs yields the applied objects ClaimsQuota picks; nil: none.
func AppliedQuota(cfg *config.Config, objs iter.Seq[*unstructured.Unstructured]) capacity.Counts {
	if objs == nil {
		return capacity.Counts{}
	}
	if s, err := newScheduler(cfg.Settings); err == nil {
		if c, ok := s.Applied(objs); ok {
			return c
		}
	}
	c, _ := noScheduler{}.Applied(objs)
	return c
}

// ClaimsQuota reports whether an applied object of group and kind is one a
// scheduler backend writes quota into (a ResourceQuota, a Kueue
// ClusterQueue, a department's Kueue Cohort, a Volcano Queue): AppliedQuota reads only
// those, so a caller may pass only those.
func ClaimsQuota(group, kind string) bool {
	for _, k := range []engine.Kind{engine.KindResourceQuota, engine.KindClusterQueue, engine.KindCohort, engine.KindVolcanoQueue} {
		if group == k.Group && kind == k.Kind {
			return true
		}
	}
	return false
}

// appliedOf sums, over the objects of objs of kind k, the GPU quantities
// (nvidia.com/ resources and DRA pools' device-class quotas, whole numbers)
// that read yields for each; ok is
// false when objs hold no object of kind k.
func appliedOf(objs iter.Seq[*unstructured.Unstructured], k engine.Kind, read func(obj map[string]any, add func(resource, quantity string))) (capacity.Counts, bool) {
	out, found := capacity.Counts{}, false
	add := func(r, v string) {
		if _, dra := capacity.IsDeviceClassQuota(r); !dra && !strings.HasPrefix(r, "nvidia.com/") {
			return
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[r] += n
		}
	}
	for u := range objs {
		if key := engine.KeyOf(u); key.Group != k.Group || key.Kind != k.Kind {
			continue
		}
		found = true
		read(u.Object, add)
	}
	return out, found
}

// listAt is the list at path in obj, nil when there is none.
func listAt(obj any, path ...string) []any {
	m, ok := obj.(map[string]any)
	if !ok {
		return nil
	}
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	l, _ := v.([]any)
	return l
}
