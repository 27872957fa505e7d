package sim

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
)

// Refresh returns the stack's objects, foreign objects at desired keys and
// every node, as the Kubernetes provider does.
func (c *Cluster) Refresh(_ context.Context, d *engine.Desired, _ engine.RefreshOptions) (*engine.Live, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := &engine.Live{Objects: map[engine.Key]*unstructured.Unstructured{}, Foreign: map[engine.Key]*unstructured.Unstructured{}, Source: c.Name()}
	for k, u := range c.objects {
		if u.GetLabels()[engine.LabelStack] == d.Stack {
			live.Objects[k] = u.DeepCopy()
		}
	}
	for _, o := range d.Objects {
		k := o.Key()
		if u, ok := c.objects[k]; ok && u.GetLabels()[engine.LabelStack] != d.Stack {
			live.Foreign[k] = u.DeepCopy()
		}
	}
	inv, err := engine.ReadInventory(d.Stack, c.inventoryConfigMaps(d.Stack))
	if err != nil {
		return nil, err
	}
	live.Inventory = inv
	// The kinds listed whole: the registry's, each kept by its reader.
	for _, rk := range engine.ReadKinds() {
		rk.Keep(live, c.readObjects(rk.GroupKind()))
	}
	return live, nil
}

// readObjects are the simulated cluster's objects of a kind refresh lists
// whole: its Nodes, its RuntimeClasses, the GPU Operator's ClusterPolicy
// (and its GPUCluster when a node runs the DRA stack) and the
// ResourceSlices of NVIDIA's DRA driver; none of any other kind.
func (c *Cluster) readObjects(gk schema.GroupKind) []*unstructured.Unstructured {
	switch gk {
	case engine.KindNode.GroupKind():
		out := make([]*unstructured.Unstructured, 0, len(c.spec.Nodes))
		for _, n := range c.spec.Nodes {
			out = append(out, c.node(n))
		}
		return out
	case engine.KindRuntimeClass.GroupKind():
		out := make([]*unstructured.Unstructured, 0, len(c.spec.RuntimeClasses))
		for _, rc := range c.spec.RuntimeClasses {
			out = append(out, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": engine.KindRuntimeClass.GroupVersion().String(), "kind": engine.KindRuntimeClass.Kind,
				"metadata": map[string]any{"name": rc}, "handler": rc,
			}})
		}
		return out
	case engine.KindResourceSlice.GroupKind():
		return c.draSlices()
	case engine.KindGPUCluster.GroupKind():
		return c.gpuClusters()
	case engine.KindClusterPolicy.GroupKind():
		cp, ok := c.objects[clusterPolicyKey]
		if !ok {
			// The simulated cluster has the GPU Operator installed.
			cp = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": engine.KindClusterPolicy.GroupVersion().String(), "kind": engine.KindClusterPolicy.Kind,
				"metadata": map[string]any{"name": "cluster-policy", "resourceVersion": "1"},
				"spec":     map[string]any{"migManager": map[string]any{"enabled": true}, "devicePlugin": map[string]any{"enabled": true}},
			}}
			if c.spec.NVIDIADriverCRD {
				_ = unstructured.SetNestedField(cp.Object, true, "spec", "driver", "useNvidiaDriverCRD")
			}
		}
		return []*unstructured.Unstructured{cp.DeepCopy()}
	}
	return nil
}

// clusterPolicyKey is the simulated GPU Operator's ClusterPolicy.
var clusterPolicyKey = engine.KeyFor(engine.KindClusterPolicy, "", "cluster-policy")

// preinstalled are the namespaces of what the simulated cluster has
// installed: the GPU Operator and a Prometheus Operator (the default
// alerts_namespace).
func preinstalled(ns string) bool { return ns == "gpu-operator" || ns == "monitoring" }

// Apply stores obj as gpuform's server-side apply would leave it.
func (c *Cluster) Apply(_ context.Context, obj *unstructured.Unstructured, _ bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := engine.KeyOf(obj)
	if ns := obj.GetNamespace(); ns != "" && !preinstalled(ns) {
		if _, ok := c.objects[engine.Key{Kind: "Namespace", Name: ns}]; !ok {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
		}
	}
	u := obj.DeepCopy()
	if prev, ok := c.objects[k]; ok {
		// Keep the labels and annotations other managers set.
		labels, annotations := prev.GetLabels(), prev.GetAnnotations()
		for key, v := range u.GetLabels() {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[key] = v
		}
		for key, v := range u.GetAnnotations() {
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[key] = v
		}
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		u.SetCreationTimestamp(prev.GetCreationTimestamp())
		u.SetUID(prev.GetUID())
	} else {
		u.SetUID(stableUID(k))
	}
	fields := runtime.DeepCopyJSON(obj.Object)
	delete(fields, "apiVersion")
	delete(fields, "kind")
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{managedEntry(engine.FieldManager, fields)}
	u.SetResourceVersion(strconv.Itoa(c.nextVersion()))
	c.objects[k] = u
	if err := c.save(); err != nil {
		return err
	}
	return nil
}

// ApplyWhole stores obj as Apply does: the simulated cluster's apply keeps
// no field of another manager but labels and annotations, so the object is
// obj whole.
func (c *Cluster) ApplyWhole(ctx context.Context, obj *unstructured.Unstructured) error {
	return c.Apply(ctx, obj, true)
}

// ApplyWholeUID is ApplyWhole, and returns the UID of the object stored.
func (c *Cluster) ApplyWholeUID(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	return c.ApplyUID(ctx, obj, true)
}

// Delete removes an object, and with a Namespace what lives in it.
func (c *Cluster) Delete(_ context.Context, k engine.Key, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.objects[k]; !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(k.Kind) + "s"}, k.Name)
	}
	delete(c.objects, k)
	if k.Kind == "Namespace" && k.Group == "" {
		for other := range c.objects {
			if other.Namespace == k.Name {
				delete(c.objects, other)
			}
		}
	}
	c.nextVersion()
	return c.save()
}

// ApplyNode sets the labels and annotations a stack wants on a node, then
// plays the GPU Operator's mig-manager (or the agent): the MIG layout the
// node now asks for is applied to its simulated GPUs and the state set.
func (c *Cluster) ApplyNode(_ context.Context, obj *unstructured.Unstructured, resourceVersion, manager string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := obj.GetName()
	var spec *NodeSpec
	for i := range c.spec.Nodes {
		if c.spec.Nodes[i].Name == name {
			spec = &c.spec.Nodes[i]
		}
	}
	if spec == nil {
		return fmt.Errorf("label node %s: the node no longer exists (it did when planned); gpuform never creates Nodes", name)
	}
	ns := c.st.Nodes[name]
	if ns == nil {
		ns = &nodeState{ResourceVersion: 1}
		c.st.Nodes[name] = ns
	}
	if resourceVersion != "" && resourceVersion != strconv.Itoa(ns.ResourceVersion) {
		return apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, name, fmt.Errorf("the node changed since the plan"))
	}
	ns.Labels, ns.Annotations, ns.Manager = obj.GetLabels(), obj.GetAnnotations(), manager
	if err := c.reconcileMIG(*spec, ns); err != nil {
		return err
	}
	// mig-manager (or the agent) takes over the MIG state gpuform marked pending.
	delete(ns.Labels, engine.LabelMIGState)
	delete(ns.Annotations, agentv1.AnnotMIGState)
	ns.ResourceVersion = c.nextVersion()
	return c.save()
}

// reconcileMIG applies the layout a node asks for, the way mig-manager
// (label nvidia.com/mig.config) or the gpuform agent (annotation
// gpuform.dev/mig-layout) would, and records the outcome.
func (c *Cluster) reconcileMIG(spec NodeSpec, ns *nodeState) error {
	name := spec.Name
	lib := c.gpus[name]
	if ns.System == nil {
		ns.System = map[string]string{}
	}
	var layout agentv1.Layout
	var stateKey string
	switch {
	case ns.Labels[engine.LabelMIGConfig] != "":
		stateKey = engine.LabelMIGState
		l, err := c.migPartedLayout(ns.Labels[engine.LabelMIGConfig])
		if err != nil {
			ns.System[stateKey] = "failed"
			return nil
		}
		layout = l
	case ns.Annotations[agentv1.AnnotMIGLayout] != "":
		stateKey = agentv1.AnnotMIGState
		var a agentv1.MIGLayout
		if err := yaml.Unmarshal([]byte(ns.Annotations[agentv1.AnnotMIGLayout]), &a); err != nil {
			ns.System[stateKey] = "failed: " + err.Error()
			return nil
		}
		layout = a.Config
	default:
		return nil
	}
	if lib == nil {
		// A model go-nvml does not simulate: the catalog's solver stands in
		// for the GPUs, and GPU Feature Discovery's labels show the result.
		ns.System[stateKey] = "success"
		if err := c.solveLayout(spec, layout); err != nil {
			ns.System[stateKey] = "failed"
			if stateKey == agentv1.AnnotMIGState {
				ns.System[stateKey] = "failed: " + err.Error()
			}
			return nil
		}
		c.st.Layouts[name] = layout
		return nil
	}
	rebootRequired, err := lib.Apply(layout)
	switch {
	case err != nil:
		ns.System[stateKey] = "failed"
		if stateKey == agentv1.AnnotMIGState {
			ns.System[stateKey] = "failed: " + err.Error()
		}
	case rebootRequired:
		ns.System[stateKey] = "reboot-required"
	default:
		ns.System[stateKey] = "success"
		c.st.Layouts[name] = layout
	}
	return nil
}

// migPartedLayout finds config name in the mig-parted ConfigMap gpuform wrote.
func (c *Cluster) migPartedLayout(name string) (agentv1.Layout, error) {
	for k, u := range c.objects {
		if k.Kind != "ConfigMap" || k.Name != engine.MIGPartedConfig {
			continue
		}
		data, _, _ := unstructured.NestedString(u.Object, "data", "config.yaml")
		var doc struct {
			Configs map[string]agentv1.Layout `json:"mig-configs"`
		}
		if err := yaml.Unmarshal([]byte(data), &doc); err != nil {
			return nil, err
		}
		if l, ok := doc.Configs[name]; ok {
			return l, nil
		}
	}
	return nil, fmt.Errorf("no mig-parted config %q", name)
}

// managedEntry is a managedFields entry saying manager applied fields.
func managedEntry(manager string, fields map[string]any) map[string]any {
	var tree func(m map[string]any) map[string]any
	tree = func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			sub, isMap := v.(map[string]any)
			switch {
			case isMap && len(sub) == 0:
				// an empty map sets no field
			case isMap:
				out["f:"+k] = tree(sub)
			default:
				out["f:"+k] = map[string]any{}
			}
		}
		return out
	}
	return map[string]any{
		"manager": manager, "operation": "Apply", "apiVersion": "v1",
		"time": time.Unix(0, 0).UTC().Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": tree(fields),
	}
}

// stableUID derives an object's UID from its key, so state files diff well.
func stableUID(k engine.Key) types.UID {
	h := sha256.Sum256([]byte(k.String()))
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

// WaitNode returns at once: the simulated mig-manager works synchronously
// in ApplyNode; it reports the state it left.
func (c *Cluster) WaitNode(_ context.Context, name, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ns := c.st.Nodes[name]
	state := ""
	if ns != nil {
		state = ns.System[key]
	}
	switch {
	case state == "success":
		return nil
	case state == "reboot-required":
		return fmt.Errorf("node %s needs a reboot to change its GPUs' MIG mode", name)
	}
	return fmt.Errorf("node %s failed to apply its MIG layout (%s=%q)", name, key, state)
}

// GPUPods returns nothing: the simulated cluster runs no pods.
func (c *Cluster) GPUPods(context.Context, []string) (map[string][]string, error) {
	return map[string][]string{}, nil
}

// ProbeEnforced returns nil: the simulated cluster has no API server whose
// admission lags behind its objects, so its policies count as enforced.
func (c *Cluster) ProbeEnforced(context.Context, string, []string) error { return nil }
