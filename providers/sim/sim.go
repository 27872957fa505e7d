// Package sim is the embedded simulated cluster: GPU nodes described in an
// HCL file, objects kept in a state file beside it, and each node's GPUs a
// go-nvml simulated server on which MIG layouts are applied through the same
// providers/nvml code as the agent. It stands in for a Kubernetes cluster in
// plan and apply, so gpuform runs end to end with no cluster and no GPU.
package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsimple"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/files"
)

// File is the simulated cluster's description.
type File struct {
	// NVIDIADriverCRD is true when the simulated GPU Operator manages
	// drivers with NVIDIADrivers (its ClusterPolicy's
	// spec.driver.useNvidiaDriverCRD).
	NVIDIADriverCRD bool `hcl:"nvidia_driver_crd,optional"`
	// RuntimeClasses are the names of the cluster's RuntimeClasses.
	RuntimeClasses []string   `hcl:"runtime_classes,optional"`
	Nodes          []NodeSpec `hcl:"node,block"`
}

// NodeSpec describes one simulated node.
type NodeSpec struct {
	Name string `hcl:"name,label"`
	// GPU is a catalog key or product name; Count GPUs of it.
	GPU    string            `hcl:"gpu"`
	Count  int               `hcl:"count"`
	Driver string            `hcl:"driver,optional"`
	Labels map[string]string `hcl:"labels,optional"`
	// Taints are the node's taints, key=value:Effect.
	Taints []string `hcl:"taints,optional"`
	// DRA says NVIDIA's DRA driver, not the device plugin, offers the
	// node's GPUs (the GPU Operator's DRA stack): it publishes them in a
	// ResourceSlice, and the node advertises no nvidia.com resource.
	DRA bool `hcl:"dra,optional"`
}

// state is what persists between runs, in <file>.state.json.
type state struct {
	Version         int                       `json:"version"`
	ResourceVersion int                       `json:"resource_version"`
	Objects         []map[string]any          `json:"objects"`
	Nodes           map[string]*nodeState     `json:"nodes"`
	Lock            *lockState                `json:"lock,omitempty"`
	Layouts         map[string]agentv1.Layout `json:"layouts,omitempty"`
}

// nodeState is what gpuform wrote on a node, with its field manager.
type nodeState struct {
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
	Manager         string            `json:"manager,omitempty"`
	ResourceVersion int               `json:"resource_version"`
	// System holds what the GPU Operator or the agent would set: MIG state
	// labels and annotations, not owned by gpuform.
	System map[string]string `json:"system,omitempty"`
}

// Limits on the simulated cluster's files, which a configuration names.
const (
	// MaxFileSize bounds the cluster description (*.sim.hcl).
	MaxFileSize = 16 << 20
	// MaxStateSize bounds the state file.
	MaxStateSize = 256 << 20
	// maxLockSize bounds the lock file, a few dozen bytes of JSON.
	maxLockSize = 4 << 10
)

// Cluster is an open simulated cluster. Every file it reads or writes (the
// description, the state file, its temporary file and the lock) is inside
// one directory, through internal/files: regular files of bounded size, no
// symbolic link leading out of the directory.
type Cluster struct {
	// dir is the directory that confines the files (absolute); name,
	// stateName are the description and the state file inside it; path is
	// dir/name, for messages and a saved plan's context.
	dir, name, stateName, path string
	spec                       File
	cat                        *mig.Catalog

	mu      sync.Mutex
	st      *state
	objects map[engine.Key]*unstructured.Unstructured
	gpus    map[string]agentv1.NodeGPUs // node -> its simulated GPUs
}

// OpenIn reads the cluster description name inside directory dir and its
// state file beside it, and rebuilds each node's simulated GPUs with the
// MIG layout applied last. name is a relative path that may not leave dir,
// through ".." or a symbolic link; the description, the state file, its
// temporary file and the lock file are regular files inside dir (a FIFO, a
// device or a link leading out is an error, not a read that blocks or a
// write elsewhere). sim drives the simulated GPUs (GPUs); nil is an error.
func OpenIn(dir, name string, sim GPUs) (*Cluster, error) {
	if sim == nil {
		return nil, errors.New("open simulated cluster: no simulated GPUs (GPUs) given")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	path := filepath.Join(dir, name)
	src, err := files.ReadIn(dir, name, MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read simulated cluster %s: the file does not exist. Pass --simulated FILE or set the cluster block's simulated to an existing file (examples/quickstart/cluster.sim.hcl is one)", path)
	} else if err != nil {
		return nil, fmt.Errorf("read simulated cluster %s: %w", path, err)
	}
	var spec File
	if err := hclsimple.Decode(filepath.Base(name), src, nil, &spec); err != nil {
		return nil, fmt.Errorf("read simulated cluster %s: %s", path, diagnosticsText(err))
	}
	c := &Cluster{
		dir:       dir,
		name:      name,
		stateName: strings.TrimSuffix(name, filepath.Ext(name)) + ".state.json",
		path:      path,
		spec:      spec,
		cat:       mig.Default(),
		objects:   map[engine.Key]*unstructured.Unstructured{},
		gpus:      map[string]agentv1.NodeGPUs{},
	}
	seen := map[string]bool{}
	for _, n := range spec.Nodes {
		if seen[n.Name] {
			return nil, fmt.Errorf("simulated cluster %s: node %q is declared twice", path, n.Name)
		}
		seen[n.Name] = true
		if _, ok := c.cat.Lookup(n.GPU); !ok {
			return nil, fmt.Errorf("simulated cluster %s: node %s has GPU %q, which is not in the catalog (gpuform catalog lists them)", path, n.Name, n.GPU)
		}
		if n.Count < 1 || n.Count > 16 {
			return nil, fmt.Errorf("simulated cluster %s: node %s has %d GPUs; give 1 to 16", path, n.Name, n.Count)
		}
		for _, t := range n.Taints {
			if _, err := parseTaint(t); err != nil {
				return nil, fmt.Errorf("simulated cluster %s: node %s: %w", path, n.Name, err)
			}
		}
	}
	if err := c.load(); err != nil {
		return nil, err
	}
	for _, n := range spec.Nodes {
		lib, err := sim.Simulate(c.cat, n.GPU, n.Count, n.Driver, n.Name)
		if err != nil {
			return nil, err
		}
		if lib == nil {
			continue
		}
		c.gpus[n.Name] = lib
		if l, ok := c.st.Layouts[n.Name]; ok {
			if _, err := lib.Apply(l); err != nil {
				return nil, fmt.Errorf("restore MIG layout of simulated node %s: %w", n.Name, err)
			}
		}
	}
	return c, nil
}

// Name describes the cluster for messages and plan sources.
func (c *Cluster) Name() string { return "simulated cluster " + c.path }

func (c *Cluster) load() error {
	c.st = &state{Version: 1, Nodes: map[string]*nodeState{}, Layouts: map[string]agentv1.Layout{}}
	b, err := files.ReadIn(c.dir, c.stateName, MaxStateSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read simulated cluster state: %w", err)
	}
	if err := json.Unmarshal(b, c.st); err != nil {
		return fmt.Errorf("read simulated cluster state %s: %w (delete the file to start from an empty cluster)", c.statePath(), err)
	}
	if c.st.Nodes == nil {
		c.st.Nodes = map[string]*nodeState{}
	}
	if c.st.Layouts == nil {
		c.st.Layouts = map[string]agentv1.Layout{}
	}
	for _, o := range c.st.Objects {
		u := &unstructured.Unstructured{Object: o}
		c.objects[engine.KeyOf(u)] = u
	}
	return nil
}

// save writes the state atomically; the caller holds c.mu.
func (c *Cluster) save() error {
	keys := make([]engine.Key, 0, len(c.objects))
	for k := range c.objects {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	c.st.Objects = c.st.Objects[:0]
	for _, k := range keys {
		c.st.Objects = append(c.st.Objects, c.objects[k].Object)
	}
	b, err := json.MarshalIndent(c.st, "", " ")
	if err != nil {
		return fmt.Errorf("encode simulated cluster state: %w", err)
	}
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return fmt.Errorf("write simulated cluster state: %w", err)
	}
	defer root.Close()
	err = files.WriteAtomicIn(root, c.stateName, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err })
	if err != nil {
		return fmt.Errorf("write simulated cluster state %s: %w", c.statePath(), err)
	}
	return nil
}

// statePath is the state file's path, for messages.
func (c *Cluster) statePath() string { return filepath.Join(c.dir, c.stateName) }

// nextVersion returns a new resourceVersion; the caller holds c.mu.
func (c *Cluster) nextVersion() int {
	c.st.ResourceVersion++
	return c.st.ResourceVersion
}

// node builds the Node object of spec as the API server would show it:
// GPU Feature Discovery labels, capacity, and what gpuform wrote.
func (c *Cluster) node(spec NodeSpec) *unstructured.Unstructured {
	g, _ := c.cat.Lookup(spec.GPU)
	labels := map[string]any{
		"kubernetes.io/hostname": spec.Name,
		"nvidia.com/gpu.present": "true",
		"nvidia.com/gpu.product": gfdProduct(g),
		"nvidia.com/gpu.count":   strconv.Itoa(spec.Count),
		"nvidia.com/gpu.memory":  strconv.Itoa(g.MemoryMiB),
		"nvidia.com/mig.capable": strconv.FormatBool(g.MIG),
	}
	driver := spec.Driver
	if driver == "" {
		driver = "550.54.15"
	}
	parts := strings.SplitN(driver, ".", 3)
	for i, k := range []string{"major", "minor", "rev"} {
		if i < len(parts) {
			labels["nvidia.com/cuda.driver."+k] = parts[i]
		}
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	annotations := map[string]any{}
	ns := c.st.Nodes[spec.Name]
	rv := 1
	var managed []any
	if ns != nil {
		for k, v := range ns.Labels {
			labels[k] = v
		}
		for k, v := range ns.Annotations {
			annotations[k] = v
		}
		rv = ns.ResourceVersion
		for k, v := range ns.System {
			if k == agentv1.AnnotMIGState {
				annotations[k] = v
			} else {
				labels[k] = v
			}
		}
		if ns.Manager != "" {
			managed = append(managed, managedEntry(ns.Manager, map[string]any{"metadata": map[string]any{"labels": engine.AnyMap(ns.Labels), "annotations": engine.AnyMap(ns.Annotations)}}))
		}
	}
	if l, ok := c.st.Layouts[spec.Name]; ok && c.gpus[spec.Name] == nil {
		for k, v := range gfdMIGLabels(spec, l) {
			labels[k] = v
		}
	}
	if lib := c.gpus[spec.Name]; lib != nil {
		if inv, err := lib.Read(); err == nil {
			inv.DriverVersion = driver
			b, _ := json.Marshal(inv)
			annotations[agentv1.AnnotInventory] = string(b)
		}
	}
	meta := map[string]any{"name": spec.Name, "labels": labels, "resourceVersion": strconv.Itoa(rv)}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	if managed != nil {
		meta["managedFields"] = managed
	}
	node := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node", "metadata": meta,
		"status": map[string]any{
			"capacity":    map[string]any{engine.ResourceGPU: strconv.Itoa(spec.Count)},
			"allocatable": map[string]any{engine.ResourceGPU: strconv.Itoa(spec.Count)},
		},
	}}
	if spec.DRA {
		node.Object["status"] = map[string]any{"capacity": map[string]any{}, "allocatable": map[string]any{}}
	}
	if taints := nodeTaints(spec.Taints); len(taints) > 0 {
		node.Object["spec"] = map[string]any{"taints": taints}
	}
	return node
}

// gfdProduct is the nvidia.com/gpu.product label GPU Feature Discovery
// would set: the catalog's first alias in its spelling, else the first
// NVML name with spaces as hyphens (as GPU Feature Discovery writes it),
// else its key.
func gfdProduct(g *mig.GPU) string {
	for _, a := range g.Aliases {
		if strings.HasPrefix(a, "NVIDIA-") || strings.HasPrefix(a, "Tesla-") {
			return a
		}
	}
	for _, a := range g.Aliases {
		if strings.HasPrefix(a, "NVIDIA ") {
			return strings.ReplaceAll(a, " ", "-")
		}
	}
	return g.Key
}

// diagnosticsText is err, hcl.Diagnostics or not, as one line: each
// diagnostic's place (when it has one: hcl.Diagnostic's own Error prints
// "<nil>" for none), summary and detail.
func diagnosticsText(err error) string {
	var diags hcl.Diagnostics
	if !errors.As(err, &diags) {
		return err.Error()
	}
	parts := make([]string, 0, len(diags))
	for _, d := range diags {
		text := d.Summary
		if d.Detail != "" {
			text += ": " + d.Detail
		}
		if d.Subject != nil {
			text = d.Subject.String() + ": " + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "; ")
}
