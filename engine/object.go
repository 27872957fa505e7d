package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"strings"

	"github.com/gpuform/gpuform/engine/kinds"
)

// Ownership labels and annotations carried by every object gpuform writes.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "gpuform"
	LabelStack     = "gpuform.dev/stack"
	AnnotAddress   = "gpuform.dev/address"
	AnnotCommit    = "gpuform.dev/commit"
	AnnotProtect   = "gpuform.dev/protect"
	// AnnotPriorities on a tenant's Namespace lists the priority classes
	// its pods may use, comma-separated (read by the stack's admission policy).
	AnnotPriorities = "gpuform.dev/priorities"
	// AnnotRuntimeClasses on a tenant's Namespace lists the RuntimeClasses
	// its pods may use, comma-separated (read by the stack's admission policy).
	AnnotRuntimeClasses = "gpuform.dev/runtime-classes"
	// AnnotGPUPools on a tenant's Namespace lists, comma-separated, the
	// pool=resource pairs its pods may ask for: a pod that asks for any
	// nvidia.com/ resource must select (gpuform.dev/pool) a pool the
	// tenant has quota on for that resource (read by the stack's pools
	// admission policy).
	AnnotGPUPools = "gpuform.dev/gpu-pools"
	// LabelDefaultPriority on a tenant's Namespace names the priority class
	// its pods and Jobs get when they name none (the stack's
	// default-priority mutating admission policies select namespaces by it).
	LabelDefaultPriority = "gpuform.dev/default-priority"
	// LabelAdmissionProbe on a ConfigMap names one of the stack's admission
	// policies, which denies that ConfigMap's creation: a server-side
	// dry-run create of one shows the API server enforces the policy in
	// the namespace.
	LabelAdmissionProbe = "gpuform.dev/admission-probe"
	// LabelKueuePriority is the label Kueue reads a workload's
	// WorkloadPriorityClass from.
	LabelKueuePriority = "kueue.x-k8s.io/priority-class"
	LabelPool          = "gpuform.dev/pool"
	FieldManager       = "gpuform"
	LabelMIGConfig     = "nvidia.com/mig.config"
	LabelMIGState      = "nvidia.com/mig.config.state"
	LabelDPConfig      = "nvidia.com/device-plugin.config"
	MIGPartedConfig    = "gpuform-mig-parted"
	DevicePluginConf   = "gpuform-device-plugin"
)

// LabelDeployMIGManager is the GPU Operator's per-node switch of its
// mig-manager DaemonSet; the operator keeps a value it finds and runs
// mig-manager only on nodes where it is "true".
const LabelDeployMIGManager = "nvidia.com/gpu.deploy.mig-manager"

// Key identifies one Kubernetes object: group, kind, namespace and name.
type Key struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// KeyOf returns the key of u.
func KeyOf(u *unstructured.Unstructured) Key {
	// Read in place: the accessors of unstructured parse the apiVersion
	// and look every field up from the root, which a plan of 50,000
	// objects does several times per object.
	kind, _ := u.Object["kind"].(string)
	apiVersion, _ := u.Object["apiVersion"].(string)
	md, _ := u.Object["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return Key{Group: groupOf(apiVersion), Kind: kind, Namespace: ns, Name: name}
}

// groupOf is the group of an apiVersion ("" for the core group's "v1"), as
// schema.ParseGroupVersion reads it.
func groupOf(apiVersion string) string {
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 && strings.Count(apiVersion, "/") == 1 {
		return apiVersion[:i]
	}
	return ""
}

// String renders the key as Kind namespace/name (or Kind name when cluster-scoped).
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Kind + " " + k.Name
	}
	return k.Kind + " " + k.Namespace + "/" + k.Name
}

// Less orders keys by kind group, kind, namespace and name.
func (k Key) Less(o Key) bool {
	if k.Group != o.Group {
		return k.Group < o.Group
	}
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Namespace != o.Namespace {
		return k.Namespace < o.Namespace
	}
	return k.Name < o.Name
}

// Object is one desired Kubernetes object and what it waits for.
//
// The objects of a compiled Desired are final: compile makes the equal small
// maps of scalars among them one copy (a label set, a model's resources),
// so nothing after compile writes into an object's maps; a stage that needs
// another content replaces a map whole (as StampCommit does) or works on a
// DeepCopy. engine/stack's TestDesiredStaysAsCompiled (every stage of plan,
// apply and drift) and providers/kubernetes'
// TestSettledRefreshReadsWhatTheDiffNeeds (settling against a real API
// server) fail on a write.
type Object struct {
	// Address is the config address of the block that produced the object.
	Address string
	// Object is the object as it will be applied.
	Object *unstructured.Unstructured
	// DependsOn lists objects that must exist before this one.
	DependsOn []Key
	// Sensitive is true when a field derives from a sensitive variable.
	Sensitive bool
	// key is Object's key when keyed is Object (see CacheKey).
	key   Key
	keyed *unstructured.Unstructured
}

// Key returns the object's key: the one CacheKey kept, while Object is
// still the object it was kept for, else KeyOf(o.Object).
func (o *Object) Key() Key {
	if o.keyed != nil && o.keyed == o.Object {
		return o.key
	}
	return KeyOf(o.Object)
}

// CacheKey keeps the object's key for Key, which a plan asks for several
// times per object (settling, diff, prune): reading it from the object
// each time reads five fields of maps spread over the heap, a tenth of a
// no-op diff's time. Call it once the object's apiVersion, kind, name and
// namespace are final, as compile does for every object it returns; Key
// computes the key again when Object is replaced, but cannot see those
// fields changed in place.
func (o *Object) CacheKey() {
	o.key, o.keyed = KeyOf(o.Object), o.Object
}

// NodePool is what a pool asks of the Nodes it selects: labels and
// annotations gpuform sets on each of them. Nodes are never created.
type NodePool struct {
	// Address is the pool's config address; Pool its name.
	Address string
	Pool    string
	// Selector picks the pool's nodes by label.
	Selector map[string]string
	// Labels and Annotations are set on every selected node.
	Labels      map[string]string
	Annotations map[string]string
	// DependsOn lists objects that must exist before nodes are labelled.
	DependsOn []Key
	// MaxUnavailable bounds the nodes re-partitioned at once.
	MaxUnavailable int
	// MIGState is the label (GPU Operator) or annotation (agent) whose value
	// says when a MIG change is done; empty for pools without MIG.
	MIGState string
}

// Desired is the compiled configuration: every object gpuform wants, the
// node labels per pool, and the kinds it owns (for refresh and prune).
type Desired struct {
	Stack   string
	Objects []*Object
	Pools   []*NodePool
	Kinds   []Kind
	// Sources maps each config address to the range of its block, for messages.
	Sources map[string]string
	// Registry is the registry of kinds the configuration was compiled
	// with, which orders the plan and explains missing kinds; nil means
	// kinds.Builtin().
	Registry *kinds.Registry
}

// KindRegistry returns d.Registry, or the builtin registry when it is nil.
func (d *Desired) KindRegistry() *kinds.Registry {
	if d.Registry != nil {
		return d.Registry
	}
	return kinds.Builtin()
}

// gpuOperatorNamespace is the namespace of the GPU Operator ConfigMaps.
func (d *Desired) gpuOperatorNamespace() string {
	for _, o := range d.Objects {
		if o.Object.GetName() == MIGPartedConfig || o.Object.GetName() == DevicePluginConf {
			return o.Object.GetNamespace()
		}
	}
	return ""
}

// StampCommit records commit in annotation gpuform.dev/commit of every
// desired object, so that drift can tell what was applied from what git
// holds. Diff does not count the stamp as a change.
func (d *Desired) StampCommit(commit string) {
	if commit == "" {
		return
	}
	for _, o := range d.Objects {
		a := o.Object.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[AnnotCommit] = commit
		o.Object.SetAnnotations(a)
	}
}

// Lookup returns the desired object with key k.
func (d *Desired) Lookup(k Key) *Object {
	for _, o := range d.Objects {
		if o.Key() == k {
			return o
		}
	}
	return nil
}

// index maps keys to desired objects.
func (d *Desired) index() map[Key]*Object {
	m := make(map[Key]*Object, len(d.Objects))
	for _, o := range d.Objects {
		m[o.Key()] = o
	}
	return m
}
