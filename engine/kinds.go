package engine

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The kinds gpuform writes. Optional ones come from CRDs that may be absent.
var (
	KindNamespace       = Kind{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}}
	KindResourceQuota   = Kind{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ResourceQuota"}, Namespaced: true}
	KindConfigMap       = Kind{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespaced: true}
	KindRoleBinding     = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, Namespaced: true}
	KindPriorityClass   = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}}
	KindVAP             = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}}
	KindVAPBinding      = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}}
	KindResourceFlavor  = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ResourceFlavor"}, Optional: true}
	KindClusterQueue    = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ClusterQueue"}, Optional: true}
	KindLocalQueue      = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "LocalQueue"}, Namespaced: true, Optional: true}
	KindWorkloadPrio    = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "WorkloadPriorityClass"}, Optional: true}
	KindVolcanoQueue    = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "Queue"}, Optional: true}
	KindInferenceServic = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}, Namespaced: true, Optional: true}
	KindNode            = Kind{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Node"}}
	KindClusterPolicy   = Kind{GroupVersionKind: schema.GroupVersionKind{Group: "nvidia.com", Version: "v1", Kind: "ClusterPolicy"}, Optional: true}
)

// ManagedKinds are the kinds gpuform may own in any stack, in apply order
// (cluster-scoped prerequisites first). Refresh lists each once.
func ManagedKinds() []Kind {
	return []Kind{
		KindNamespace, KindPriorityClass, KindWorkloadPrio, KindResourceFlavor, KindVolcanoQueue,
		KindConfigMap, KindResourceQuota, KindRoleBinding, KindVAP, KindVAPBinding,
		KindClusterQueue, KindLocalQueue, KindInferenceServic,
	}
}

// Well-known names of the objects a tenant becomes.
const (
	// StackAddress is the config address of objects shared by the whole stack
	// (the GPU Operator ConfigMaps), which no single block owns.
	StackAddress   = "gpuform"
	QuotaName      = "gpuform"
	LocalQueueName = "default"
	ResourceGPU    = "nvidia.com/gpu"
)

// MIGResource is the extended resource a MIG profile is advertised as by the
// NVIDIA device plugin's mixed strategy: nvidia.com/mig-1g.10gb, with "+" as ".".
func MIGResource(profile string) string {
	return "nvidia.com/mig-" + strings.ReplaceAll(profile, "+", ".")
}
