package kinds

import "k8s.io/apimachinery/pkg/runtime/schema"

// API groups of the builtin kinds: the only place gpuform's code names them
// (internal/arch TestNoHandWrittenAPIVersions).
const (
	GroupRBAC       = "rbac.authorization.k8s.io"
	GroupScheduling = "scheduling.k8s.io"
	GroupAdmission  = "admissionregistration.k8s.io"
	GroupKueue      = "kueue.x-k8s.io"
	GroupVolcano    = "scheduling.volcano.sh"
	GroupKServe     = "serving.kserve.io"
	GroupNVIDIA     = "nvidia.com"
	groupLease      = "coordination.k8s.io"
	GroupMonitoring = "monitoring.coreos.com"
	GroupNode       = "node.k8s.io"
	GroupResource   = "resource.k8s.io"
)

// Install hints of the optional kinds.
const (
	hintKueue              = "install Kueue (https://kueue.sigs.k8s.io) or set scheduler = \"none\" in the gpuform block"
	hintVolcano            = "install Volcano or set scheduler = \"none\" in the gpuform block"
	hintKServe             = "install KServe (https://kserve.github.io), or remove the model blocks"
	hintNVIDIA             = "install the NVIDIA GPU Operator"
	hintPrometheusOperator = "install the Prometheus Operator (https://prometheus-operator.dev), or remove the alert blocks and the alerts blocks of pools and tenants"
	hintDriver             = "install the NVIDIA GPU Operator v23.9 or later with its NVIDIADriver CRD (driver.nvidiaDriverCRD.enabled=true), or set pin_drivers = false in the gpuform block"
	hintVAP                = "upgrade Kubernetes to v1.30 or later, which serves ValidatingAdmissionPolicy at admissionregistration.k8s.io/v1"
	hintDRA                = "upgrade Kubernetes to v1.34 or later, which serves DeviceClass at resource.k8s.io/v1, or set mode = \"device_plugin\" on the pools with mode = \"dra\""
	hintMAP                = "upgrade Kubernetes to v1.36 or later, which serves MutatingAdmissionPolicy at admissionregistration.k8s.io/v1, or remove the tenants' default_priority"
)

// The oldest releases that serve the versions gpuform writes (see
// docs/compatibility.md).
const (
	// Kueue v0.15 added kueue.x-k8s.io/v1beta2.
	minKueue = "Kueue v0.15"
	// Kubernetes v1.30 serves admissionregistration.k8s.io/v1
	// ValidatingAdmissionPolicy (v1beta1 before).
	minKubernetesVAP = "Kubernetes v1.30"
	// Kubernetes v1.36 serves admissionregistration.k8s.io/v1
	// MutatingAdmissionPolicy (a tenant's default_priority).
	minKubernetesMAP = "Kubernetes v1.36"
	// Kubernetes v1.34 serves resource.k8s.io/v1 (Dynamic Resource
	// Allocation GA): a DRA pool's DeviceClasses.
	minKubernetesDRA = "Kubernetes v1.34"
	// KServe v0.16 knows the deployment modes Standard and Knative, which
	// gpuform writes; serving.kserve.io/v1beta1 itself is older.
	minKServe = "KServe v0.16"
	// Volcano v1.3 added the Queue's spec.reclaimable.
	minVolcano = "Volcano v1.3"
	// GPU Operator v1.11 added ClusterPolicy spec.devicePlugin.config.
	minGPUOperator = "NVIDIA GPU Operator v1.11"
	// GPU Operator v23.9 added the NVIDIADriver (nvidia.com/v1alpha1).
	minNVIDIADriver = "NVIDIA GPU Operator v23.9"
	// GPU Operator v26.7 added the GPUCluster (nvidia.com/v1alpha1), its
	// DRA-based stack.
	minGPUCluster = "NVIDIA GPU Operator v26.7"
	// Prometheus Operator v0.20 added the PrometheusRule CRD
	// (monitoring.coreos.com/v1): groups of rules with alert, expr, for,
	// labels and annotations, all that gpuform writes.
	minPrometheusOperator = "Prometheus Operator v0.20"
)

// builtin is the table of the kinds gpuform manages and reads. Ranks are
// apply order (what others depend on comes first), ten apart so that a
// kind can go between two. The order of the table is the order of the RBAC
// rules' resources.
func builtin() []Entry {
	gvk := func(group, version, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
	}
	// What the roles need on a managed kind: plan and drift read it; apply
	// lists it (refresh), writes it with server-side apply (a PATCH, which
	// needs create too when it creates the object) and prunes it (DELETE).
	managedAccess := Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList | VerbCreate | VerbPatch | VerbDelete}
	// The kinds that carry a tenant's limits are owned whole (Entry.OwnedWhole).
	return []Entry{
		// The managed kinds: a tenant's namespace, quota, configuration and bindings,
		{Kind: Kind{GroupVersionKind: gvk("", "v1", "Namespace")}, Resource: "namespaces", Use: Managed, Rank: 0, Access: managedAccess},
		// The proof of a tenant's new quota before its access reads it and,
		// where nothing counts against it yet, writes its status.
		{Kind: Kind{GroupVersionKind: gvk("", "v1", "ResourceQuota"), Namespaced: true}, Resource: "resourcequotas", Use: Managed, Rank: 60, OwnedWhole: true,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: managedAccess.Apply | VerbGet, ApplyStatus: VerbUpdate}},
		{Kind: Kind{GroupVersionKind: gvk("", "v1", "ConfigMap"), Namespaced: true}, Resource: "configmaps", Use: Managed, Rank: 50, Access: managedAccess},
		// A tenant's access ranks after everything that limits it (quota,
		// admission policies and bindings, queues): created last, deleted
		// first.
		{Kind: Kind{GroupVersionKind: gvk(GroupRBAC, "v1", "RoleBinding"), Namespaced: true}, Resource: "rolebindings", Use: Managed, Rank: 115, Access: managedAccess, OwnedWhole: true},
		// priorities and the stack's admission policy,
		{Kind: Kind{GroupVersionKind: gvk(GroupScheduling, "v1", "PriorityClass")}, Resource: "priorityclasses", Use: Managed, Rank: 10, Access: managedAccess},
		{Kind: Kind{GroupVersionKind: gvk(GroupAdmission, "v1", "ValidatingAdmissionPolicy")}, Resource: "validatingadmissionpolicies", Use: Managed, Rank: 80, InstallHint: hintVAP, MinRelease: minKubernetesVAP, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupAdmission, "v1", "ValidatingAdmissionPolicyBinding")}, Resource: "validatingadmissionpolicybindings", Use: Managed, Rank: 90, InstallHint: hintVAP, MinRelease: minKubernetesVAP, Access: managedAccess, OwnedWhole: true},
		// the tenants' default priorities (only those need v1.36),
		{Kind: Kind{GroupVersionKind: gvk(GroupAdmission, "v1", "MutatingAdmissionPolicy")}, Resource: "mutatingadmissionpolicies", Use: Managed, Rank: 82, InstallHint: hintMAP, MinRelease: minKubernetesMAP, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupAdmission, "v1", "MutatingAdmissionPolicyBinding")}, Resource: "mutatingadmissionpolicybindings", Use: Managed, Rank: 92, InstallHint: hintMAP, MinRelease: minKubernetesMAP, Access: managedAccess, OwnedWhole: true},
		// a DRA pool's DeviceClasses (one per pool and MIG profile), which
		// tenants' ResourceQuotas count devices of,
		{Kind: Kind{GroupVersionKind: gvk(GroupResource, "v1", "DeviceClass")}, Resource: "deviceclasses", Use: Managed, Rank: 12, InstallHint: hintDRA, MinRelease: minKubernetesDRA, Access: managedAccess},
		// and the ResourceClaimTemplate of each model on a DRA pool, which its
		// pods' claims are made from,
		{Kind: Kind{GroupVersionKind: gvk(GroupResource, "v1", "ResourceClaimTemplate"), Namespaced: true}, Resource: "resourceclaimtemplates", Use: Managed, Rank: 126, InstallHint: hintDRA, MinRelease: minKubernetesDRA, Access: managedAccess},
		// the schedulers' queues (Kueue, Volcano) and the models (KServe).
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "ResourceFlavor"), Optional: true}, Resource: "resourceflavors", Use: Managed, Rank: 30, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess},
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "ClusterQueue"), Optional: true}, Resource: "clusterqueues", Use: Managed, Rank: 100, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess, OwnedWhole: true},
		// A department's Cohort (its own quota, its parent) comes before the
		// ClusterQueues of its tenants and after its parent's (DependsOn).
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "Cohort"), Optional: true}, Resource: "cohorts", Use: Managed, Rank: 95, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess, OwnedWhole: true},
		// MultiKueue on a fleet's manager cluster: a worker's connection
		// (its kubeconfig Secret by name), the workers of a tenant, and the
		// admission check its ClusterQueue carries, in that order; owned whole,
		// since a field added to one would send a tenant's jobs elsewhere.
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "MultiKueueCluster"), Optional: true}, Resource: "multikueueclusters", Use: Managed, Rank: 84, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "MultiKueueConfig"), Optional: true}, Resource: "multikueueconfigs", Use: Managed, Rank: 86, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "AdmissionCheck"), Optional: true}, Resource: "admissionchecks", Use: Managed, Rank: 88, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "LocalQueue"), Namespaced: true, Optional: true}, Resource: "localqueues", Use: Managed, Rank: 110, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupKueue, "v1beta2", "WorkloadPriorityClass"), Optional: true}, Resource: "workloadpriorityclasses", Use: Managed, Rank: 20, InstallHint: hintKueue, MinRelease: minKueue, Access: managedAccess},
		{Kind: Kind{GroupVersionKind: gvk(GroupVolcano, "v1beta1", "Queue"), Optional: true}, Resource: "queues", Use: Managed, Rank: 40, InstallHint: hintVolcano, MinRelease: minVolcano, Access: managedAccess, OwnedWhole: true},
		{Kind: Kind{GroupVersionKind: gvk(GroupKServe, "v1beta1", "InferenceService"), Namespaced: true, Optional: true}, Resource: "inferenceservices", Use: Managed, Rank: 130, InstallHint: hintKServe, MinRelease: minKServe, Access: managedAccess},
		// A pool's driver pin (pin_drivers): the GPU Operator's NVIDIADriver.
		{Kind: Kind{GroupVersionKind: gvk(GroupNVIDIA, "v1alpha1", "NVIDIADriver"), Optional: true}, Resource: "nvidiadrivers", Use: Managed, Rank: 45, InstallHint: hintDriver, MinRelease: minNVIDIADriver, Access: managedAccess},
		// The stack's alerting rules (the Prometheus Operator).
		{Kind: Kind{GroupVersionKind: gvk(GroupMonitoring, "v1", "PrometheusRule"), Namespaced: true, Optional: true}, Resource: "prometheusrules", Use: Managed, Rank: 125, InstallHint: hintPrometheusOperator, MinRelease: minPrometheusOperator, Access: managedAccess},
		// Nodes: pool labels and MIG annotations (server-side apply); apply
		// GETs one for its MIG state or after a label change raced a heartbeat.
		{Kind: Kind{GroupVersionKind: gvk("", "v1", "Node")}, Resource: "nodes", Use: Patched, Rank: 120,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList | VerbGet | VerbPatch}},
		// The GPU Operator's ClusterPolicy: pointed at gpuform's ConfigMaps.
		{Kind: Kind{GroupVersionKind: gvk(GroupNVIDIA, "v1", "ClusterPolicy"), Optional: true}, Resource: "clusterpolicies", Use: Patched, Rank: 140, InstallHint: hintNVIDIA, MinRelease: minGPUOperator,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList | VerbPatch}},
		// The GPU Operator's GPUCluster (v26): its DRA stack, under which
		// nodes advertise no nvidia.com resource.
		{Kind: Kind{GroupVersionKind: gvk(GroupNVIDIA, "v1alpha1", "GPUCluster"), Optional: true}, Resource: "gpuclusters", Use: Read, InstallHint: hintNVIDIA, MinRelease: minGPUCluster,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList}},
		// The GPU pods a MIG re-partitioning would disrupt.
		{Kind: Kind{GroupVersionKind: gvk("", "v1", "Pod"), Namespaced: true}, Resource: "pods", Use: Read,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList}},
		// The RuntimeClasses of the cluster: plan warns when a tenant's
		// runtime_class names one that does not exist.
		{Kind: Kind{GroupVersionKind: gvk(GroupNode, "v1", "RuntimeClass")}, Resource: "runtimeclasses", Use: Read,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList}},
		// The devices NVIDIA's DRA driver publishes: a DRA pool's GPUs and
		// MIG devices (capacity), absent before Kubernetes v1.34.
		{Kind: Kind{GroupVersionKind: gvk(GroupResource, "v1", "ResourceSlice")}, Resource: "resourceslices", Use: Read,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbList}},
		// The ResourceClaims that count against a quota of device classes:
		// the proof of a new quota lists at most one per namespace.
		{Kind: Kind{GroupVersionKind: gvk(GroupResource, "v1", "ResourceClaim"), Namespaced: true}, Resource: "resourceclaims", Use: Auxiliary,
			Access: Access{Apply: VerbList}},
		// The stack's apply lock, gpuform-system/gpuform-<stack>.
		{Kind: Kind{GroupVersionKind: gvk(groupLease, "v1", "Lease"), Namespaced: true}, Resource: "leases", Use: Auxiliary,
			Access: Access{Plan: VerbsRead, Drift: VerbsRead, Apply: VerbGet | VerbCreate | VerbUpdate | VerbDelete}},
		// A tenant's RoleBindings grant the built-in roles: Kubernetes lets
		// an identity bind a role only if it holds all of it or may bind it.
		{Kind: Kind{GroupVersionKind: gvk(GroupRBAC, "v1", "ClusterRole")}, Resource: "clusterroles", Use: Auxiliary,
			Access: Access{Apply: VerbBind, ResourceNames: []string{"admin", "edit", "view"}}},
	}
}
