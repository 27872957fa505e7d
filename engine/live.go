package engine

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/kinds"
)

// Live is what a provider's refresh read from the cluster: the objects of
// the stack (one LIST per kind), the Nodes, and whatever stands in the way.
type Live struct {
	// Objects are the objects labelled with the stack, by key. A provider
	// may leave out what the diff does not read of them (status, other
	// field managers' managedFields entries) and give a managedFields
	// entry's fieldsV1 as a string holding its JSON (unparsed) instead of
	// a map, which the diff reads as JSON. Every value is a JSON value
	// (DeepCopy works); a typed read (GetManagedFields) sees such a
	// fieldsV1 as that string, quoted.
	Objects map[Key]*unstructured.Unstructured
	// Settled are the keys of Objects that the refresh settled (see
	// Settler): compared with their desired objects and found unchanged,
	// kept as slim copies (SlimLive). Diff counts them unchanged without
	// comparing them again, nor checking who owns them (a Settler settles
	// only objects the stack owns, outside the lock's namespace). Nil when
	// the refresh settled none.
	Settled map[Key]bool
	// SettledFor is the desired state Settled was settled against: the only
	// one this Live may be diffed with while Settled is not empty.
	SettledFor *Desired
	// Foreign are objects at a desired key that the stack does not own
	// (unlabelled, or labelled with another stack), by key.
	Foreign map[Key]*unstructured.Unstructured
	// Inventory is gpuform's record of the stack (what it applied, with
	// each object's UID and commit), read from LockNamespace; nil when
	// there is none yet. Ownership and applied commits come from it (Owns,
	// AppliedCommit).
	Inventory *Inventory
	// Nodes are all Nodes of the cluster.
	Nodes []*unstructured.Unstructured
	// MissingKinds are kinds the cluster does not serve at the version
	// gpuform writes (CRD not installed, or an older release of it).
	MissingKinds []Kind
	// ServedVersions maps each kind of MissingKinds that the cluster serves
	// at other versions (an older release of what serves it) to those
	// versions, as discovery lists them.
	ServedVersions map[schema.GroupKind][]string
	// ClusterPolicies are the GPU Operator's ClusterPolicy objects.
	ClusterPolicies []*unstructured.Unstructured
	// RuntimeClasses are the names of the cluster's RuntimeClasses; nil
	// when the provider did not read them.
	RuntimeClasses map[string]bool
	// Pods are the running and pending pods of the desired tenants'
	// namespaces, as PodWarnings reads them; nil when the provider did
	// not read them. PodsTruncated says the provider kept only MaxLivePods.
	Pods          []LivePod
	PodsTruncated bool
	// DRA is what NVIDIA's DRA driver publishes in ResourceSlices, by node
	// (DRA.Served false when the cluster does not serve them; slices of
	// other drivers are not kept), the GPU Operator's GPUClusters and
	// Kueue's configuration.
	DRA capacity.DRAInventory
	// Source describes where the state was read from (the server URL and context).
	Source string
}

// ReadKind is a kind that refresh lists whole, not by stack (a Patched or
// Read kind of the registry, engine/kinds), with its reader.
type ReadKind struct {
	Kind
	// Absent is no error: the cluster may not serve the kind (a CRD), or
	// what reads it does without it; Keep is then not called.
	Absent bool
	// Keep stores in live what a plan reads of the kind's objects, every
	// object of the cluster (items may be empty, never shared).
	Keep func(live *Live, items []*unstructured.Unstructured)
	// FieldSelector narrows the LIST to the objects the reader keeps (a
	// managed kind's one object gpuform reads but does not own, as Kueue's
	// configuration); empty lists every object. Keep still sees only what
	// it reads, whatever a provider does with the selector.
	FieldSelector string
}

// readers are the readers of the kinds refresh lists whole, by group and
// kind: each stores what is read in a field of Live. Adding a read kind is
// its registry entry, a field of Live and its reader here. A nil reader
// marks a kind a provider reads otherwise (the pods of the tenants'
// namespaces, Live.Pods).
func readers() map[schema.GroupKind]ReadKind {
	return map[schema.GroupKind]ReadKind{
		KindNode.GroupKind(): {Keep: func(live *Live, items []*unstructured.Unstructured) { live.Nodes = items }},
		KindClusterPolicy.GroupKind(): {Absent: true, Keep: func(live *Live, items []*unstructured.Unstructured) {
			live.ClusterPolicies = items
		}},
		// Only warnings read them: a cluster without them has none.
		KindRuntimeClass.GroupKind(): {Absent: true, Keep: func(live *Live, items []*unstructured.Unstructured) {
			live.RuntimeClasses = make(map[string]bool, len(items))
			for _, u := range items {
				live.RuntimeClasses[u.GetName()] = true
			}
		}},
		// Capacity reads a DRA pool's devices; a cluster older than v1.34
		// has none, which capacity reports for a DRA pool.
		KindResourceSlice.GroupKind(): {Absent: true, Keep: func(live *Live, items []*unstructured.Unstructured) {
			inv := capacity.DRADevicesOf(items, true)
			live.DRA.Served, live.DRA.Nodes = inv.Served, inv.Nodes
		}},
		// The GPU Operator's DRA stack; absent before its v26.7.
		KindGPUCluster.GroupKind(): {Absent: true, Keep: func(live *Live, items []*unstructured.Unstructured) {
			live.DRA.GPUClusters = make([]string, 0, len(items))
			for _, u := range items {
				live.DRA.GPUClusters = append(live.DRA.GPUClusters, u.GetName())
			}
		}},
		// Kueue's configuration: whether it counts the DRA pools' devices.
		// A ConfigMap is a managed kind too; only this one is read whole.
		KindConfigMap.GroupKind(): {FieldSelector: "metadata.name=" + capacity.KueueConfigMap, Keep: func(live *Live, items []*unstructured.Unstructured) {
			live.DRA.Kueue = capacity.KueueConfigOf(items)
		}},
		{Kind: "Pod"}: {},
	}
}

// moreReaders are further LISTs of a kind readers reads already, each
// narrowed by its own field selector (a LIST selects one name).
func moreReaders() map[schema.GroupKind][]ReadKind {
	return map[schema.GroupKind][]ReadKind{
		// The Volcano scheduler's configuration: whether it enforces the
		// departments' hierarchical Queues.
		KindConfigMap.GroupKind(): {{FieldSelector: "metadata.name=" + capacity.VolcanoConfigMap, Keep: func(live *Live, items []*unstructured.Unstructured) {
			live.DRA.Volcano = capacity.VolcanoConfigOf(items)
		}}},
	}
}

// ReadKinds returns the kinds refresh lists whole, in the registry's order,
// each with its reader (see readers) and then its further ones
// (moreReaders).
func ReadKinds() []ReadKind {
	rs, more := readers(), moreReaders()
	var out []ReadKind
	for _, e := range kinds.Builtin().Entries() {
		if r := rs[e.GroupKind()]; r.Keep != nil {
			r.Kind = e.Kind
			out = append(out, r)
			for _, m := range more[e.GroupKind()] {
				m.Kind = e.Kind
				out = append(out, m)
			}
		}
	}
	return out
}

// RefreshOptions tune a provider's refresh.
type RefreshOptions struct {
	// Adopt reads foreign objects whole (they will be diffed for adoption)
	// instead of by metadata only.
	Adopt bool
	// Parallelism bounds concurrent LISTs; zero means 16 (every kind at once).
	Parallelism int
}

// Owner describes who owns a foreign object, for conflict messages.
func Owner(u *unstructured.Unstructured) string {
	if s := u.GetLabels()[LabelStack]; s != "" {
		return "gpuform stack " + s
	}
	if m := u.GetLabels()[LabelManagedBy]; m != "" {
		return m
	}
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != "" {
			return "field manager " + mf.Manager
		}
	}
	return "nobody gpuform knows"
}

// LockHeldError says who holds a stack's apply lock.
type LockHeldError struct {
	Stack, ID, Holder string
	Since             time.Time
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("the state lock of stack %s is held by %s since %s (lock ID %s). Wait for that run to finish, retry with --lock-timeout, or, if it was killed, run gpuform force-unlock %s",
		e.Stack, e.Holder, e.Since.UTC().Format(time.RFC3339), e.ID, e.ID)
}

// LockLostError is why a run stopped writing: the stack's lock may no longer
// be its own (its Lease was deleted, taken by another run, or could not be
// renewed in time), so another run may be writing.
type LockLostError struct {
	Stack, ID string
	// Reason says what happened to the Lease.
	Reason string
}

// Error names the stack, the lock and what happened to it.
func (e *LockLostError) Error() string {
	return fmt.Sprintf("lost the lock of stack %s (lock ID %s): %s", e.Stack, e.ID, e.Reason)
}

// CleanLive returns a live object without its status and the metadata the
// server manages (managedFields, uid, resourceVersion, generation,
// creationTimestamp). The top level and metadata are new maps; nested
// values are shared with obj.
func CleanLive(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k == "status" {
			continue
		}
		out[k] = v
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			switch k {
			case "managedFields", "uid", "resourceVersion", "generation", "creationTimestamp":
				continue
			}
			m[k] = v
		}
		out["metadata"] = m
	}
	return out
}
