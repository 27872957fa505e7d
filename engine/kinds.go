package engine

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine/kinds"
	"github.com/gpuform/gpuform/engine/mig"
)

// Kind is an API kind gpuform manages or reads, with its scope; the
// registry of kinds (package kinds) holds the rest of what gpuform knows
// of it.
type Kind = kinds.Kind

// The builtin kinds, as the builtin registry (kinds.Builtin) describes
// them: read-only views, not a second table. What gpuform writes takes its
// apiVersion from these (Kind.GroupVersion), so a version bump is one line
// of the registry. Optional ones come from CRDs that may be absent.
var (
	KindNamespace        = BuiltinKind("", "Namespace")
	KindResourceQuota    = BuiltinKind("", "ResourceQuota")
	KindConfigMap        = BuiltinKind("", "ConfigMap")
	KindRoleBinding      = BuiltinKind(kinds.GroupRBAC, "RoleBinding")
	KindPriorityClass    = BuiltinKind(kinds.GroupScheduling, "PriorityClass")
	KindDeviceClass      = BuiltinKind(kinds.GroupResource, "DeviceClass")
	KindClaimTemplate    = BuiltinKind(kinds.GroupResource, "ResourceClaimTemplate")
	KindVAP              = BuiltinKind(kinds.GroupAdmission, "ValidatingAdmissionPolicy")
	KindVAPBinding       = BuiltinKind(kinds.GroupAdmission, "ValidatingAdmissionPolicyBinding")
	KindMAP              = BuiltinKind(kinds.GroupAdmission, "MutatingAdmissionPolicy")
	KindMAPBinding       = BuiltinKind(kinds.GroupAdmission, "MutatingAdmissionPolicyBinding")
	KindResourceFlavor   = BuiltinKind(kinds.GroupKueue, "ResourceFlavor")
	KindClusterQueue     = BuiltinKind(kinds.GroupKueue, "ClusterQueue")
	KindCohort           = BuiltinKind(kinds.GroupKueue, "Cohort")
	KindLocalQueue       = BuiltinKind(kinds.GroupKueue, "LocalQueue")
	KindAdmissionCheck   = BuiltinKind(kinds.GroupKueue, "AdmissionCheck")
	KindMKConfig         = BuiltinKind(kinds.GroupKueue, "MultiKueueConfig")
	KindMKCluster        = BuiltinKind(kinds.GroupKueue, "MultiKueueCluster")
	KindWorkloadPrio     = BuiltinKind(kinds.GroupKueue, "WorkloadPriorityClass")
	KindVolcanoQueue     = BuiltinKind(kinds.GroupVolcano, "Queue")
	KindInferenceService = BuiltinKind(kinds.GroupKServe, "InferenceService")
	KindNVIDIADriver     = BuiltinKind(kinds.GroupNVIDIA, "NVIDIADriver")
	KindPrometheusRule   = BuiltinKind(kinds.GroupMonitoring, "PrometheusRule")
	KindNode             = BuiltinKind("", "Node")
	KindClusterPolicy    = BuiltinKind(kinds.GroupNVIDIA, "ClusterPolicy")
	KindRuntimeClass     = BuiltinKind(kinds.GroupNode, "RuntimeClass")
	KindResourceSlice    = BuiltinKind(kinds.GroupResource, "ResourceSlice")
	KindGPUCluster       = BuiltinKind(kinds.GroupNVIDIA, "GPUCluster")
)

// KeyFor is the key of the object of kind k at namespace and name.
func KeyFor(k Kind, namespace, name string) Key {
	return Key{Group: k.Group, Kind: k.Kind, Namespace: namespace, Name: name}
}

// BuiltinKind is the kind of group and kind in the builtin registry, for
// the code that writes or reads a kind without a view above. It panics when the registry lacks the kind: a
// package-level view fails the first test that loads it.
func BuiltinKind(group, kind string) Kind {
	e, ok := kinds.Builtin().Lookup(schema.GroupKind{Group: group, Kind: kind})
	if !ok {
		panic("engine: the builtin registry of kinds has no " + kind)
	}
	return e.Kind
}

// ManagedKinds are the kinds gpuform may own in any stack, in apply order
// (cluster-scoped prerequisites first): the builtin registry's managed
// kinds. Refresh lists each once.
func ManagedKinds() []Kind { return kinds.Builtin().Managed() }

// groupKind is the group and kind of a key.
func groupKind(k Key) schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }

// Well-known names of the objects a tenant becomes.
const (
	// StackAddress is the config address of objects shared by the whole stack
	// (the GPU Operator ConfigMaps), which no single block owns.
	StackAddress   = "gpuform"
	QuotaName      = "gpuform"
	LocalQueueName = "default"
	// ResourceGPU is mig.ResourceGPU, the extended resource of a whole GPU.
	ResourceGPU = mig.ResourceGPU
)

// MIGResource is the extended resource a MIG profile is advertised as by the
// NVIDIA device plugin's mixed strategy: nvidia.com/mig-1g.10gb, with "+" as ".".
func MIGResource(profile string) string { return mig.Resource(profile) }
