package kubernetes

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// nodeGVK is the kind a refresh lists whole and trims (nodeObject).
var nodeGVK = schema.GroupVersionKind{Version: "v1", Kind: "Node"}

// kubeletNode returns the JSON of GPU node i as a real cluster's API server
// sends it: labels from GPU Feature Discovery and Node Feature Discovery,
// the status a kubelet reports (conditions, addresses, nodeInfo, 50
// container images, runtime handlers) and the field managers that wrote
// them, gpuform's pool labels among them (owner: the field manager of
// those labels, "gpuform-large" or another stack's).
func kubeletNode(i int, owner string) string {
	var images strings.Builder
	for j := range 50 {
		if j > 0 {
			images.WriteByte(',')
		}
		fmt.Fprintf(&images, `{"names":["registry.example.com/team-%02d/image-%02d@sha256:%064d","registry.example.com/team-%02d/image-%02d:v1.%d.0"],"sizeBytes":%d}`,
			j%7, j, j, j%7, j, j, 100000000+j*7919)
	}
	return fmt.Sprintf(`{"metadata":{"name":"gpu-%04d","uid":"0f0c2a3e-0000-4000-8000-%012d","resourceVersion":"%d","creationTimestamp":"2026-11-30T10:00:00Z",
"labels":{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","kubernetes.io/hostname":"gpu-%04d","kubernetes.io/os":"linux",
"node.kubernetes.io/instance-type":"p4d.24xlarge","topology.kubernetes.io/region":"us-east-1","topology.kubernetes.io/zone":"us-east-1a",
"feature.node.kubernetes.io/cpu-cpuid.AVX512F":"true","feature.node.kubernetes.io/kernel-version.full":"6.8.0-1019-aws","feature.node.kubernetes.io/pci-10de.present":"true",
"nvidia.com/cuda.driver.major":"570","nvidia.com/cuda.driver.minor":"124","nvidia.com/cuda.runtime.major":"12","nvidia.com/gpu.count":"8","nvidia.com/gpu.family":"ampere",
"nvidia.com/gpu.memory":"40960","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB","nvidia.com/gpu.present":"true","nvidia.com/mig.capable":"true","nvidia.com/mig.strategy":"mixed",
"nvidia.com/mig.config":"all-1g.5gb","nvidia.com/mig.config.state":"success","gpuform.dev/pool":"a100"},
"annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true","nfd.node.kubernetes.io/feature-labels":"cpu-cpuid.AVX512F,kernel-version.full,pci-10de.present"},
"managedFields":[
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:node.alpha.kubernetes.io/ttl":{},"f:volumes.kubernetes.io/controller-managed-attach-detach":{}},"f:labels":{".":{},"f:beta.kubernetes.io/arch":{},"f:beta.kubernetes.io/os":{},"f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{},"f:node.kubernetes.io/instance-type":{},"f:topology.kubernetes.io/region":{},"f:topology.kubernetes.io/zone":{}}},"f:spec":{"f:providerID":{}}},"manager":"kubelet","operation":"Update","time":"2026-11-30T10:00:00Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:podCIDR":{},"f:podCIDRs":{".":{},"v:\"10.244.%d.0/24\"":{}}}},"manager":"kube-controller-manager","operation":"Update","time":"2026-11-30T10:00:01Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:nfd.node.kubernetes.io/feature-labels":{}},"f:labels":{"f:feature.node.kubernetes.io/cpu-cpuid.AVX512F":{},"f:feature.node.kubernetes.io/kernel-version.full":{},"f:feature.node.kubernetes.io/pci-10de.present":{},"f:nvidia.com/cuda.driver.major":{},"f:nvidia.com/cuda.driver.minor":{},"f:nvidia.com/cuda.runtime.major":{},"f:nvidia.com/gpu.count":{},"f:nvidia.com/gpu.family":{},"f:nvidia.com/gpu.memory":{},"f:nvidia.com/gpu.present":{},"f:nvidia.com/gpu.product":{},"f:nvidia.com/mig.capable":{},"f:nvidia.com/mig.strategy":{}}}},"manager":"nfd-master","operation":"Update","time":"2026-11-30T10:00:02Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:gpuform.dev/pool":{},"f:nvidia.com/mig.config":{}}}},"manager":"%s","operation":"Apply","time":"2026-11-30T10:00:03Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:nvidia.com/mig.config.state":{}}}},"manager":"nvidia-mig-manager","operation":"Update","time":"2026-11-30T10:00:04Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:allocatable":{"f:nvidia.com/gpu":{},"f:nvidia.com/mig-1g.5gb":{}},"f:capacity":{"f:nvidia.com/gpu":{},"f:nvidia.com/mig-1g.5gb":{}},"f:conditions":{"k:{\"type\":\"DiskPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"MemoryPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"PIDPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{}}},"f:images":{},"f:nodeInfo":{"f:bootID":{}},"f:runtimeHandlers":{}}},"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-11-30T10:05:00Z"}]},
"spec":{"podCIDR":"10.244.%d.0/24","podCIDRs":["10.244.%d.0/24"],"providerID":"aws:///us-east-1a/i-%017d","taints":[{"effect":"NoSchedule","key":"nvidia.com/gpu","value":"present"}]},
"status":{"capacity":{"cpu":"96","ephemeral-storage":"8123456Ki","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"1176832196Ki","nvidia.com/gpu":"0","nvidia.com/mig-1g.5gb":"56","pods":"110"},
"allocatable":{"cpu":"95690m","ephemeral-storage":"7486311051","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"1164125380Ki","nvidia.com/gpu":"0","nvidia.com/mig-1g.5gb":"56","pods":"110"},
"conditions":[{"lastHeartbeatTime":"2026-11-30T12:00:00Z","lastTransitionTime":"2026-11-30T10:00:00Z","message":"kubelet has sufficient memory available","reason":"KubeletHasSufficientMemory","status":"False","type":"MemoryPressure"},
{"lastHeartbeatTime":"2026-11-30T12:00:00Z","lastTransitionTime":"2026-11-30T10:00:00Z","message":"kubelet has no disk pressure","reason":"KubeletHasNoDiskPressure","status":"False","type":"DiskPressure"},
{"lastHeartbeatTime":"2026-11-30T12:00:00Z","lastTransitionTime":"2026-11-30T10:00:00Z","message":"kubelet has sufficient PID available","reason":"KubeletHasSufficientPID","status":"False","type":"PIDPressure"},
{"lastHeartbeatTime":"2026-11-30T12:00:00Z","lastTransitionTime":"2026-11-30T10:00:30Z","message":"kubelet is posting ready status","reason":"KubeletReady","status":"True","type":"Ready"}],
"addresses":[{"address":"10.0.%d.%d","type":"InternalIP"},{"address":"ip-10-0-%d-%d.ec2.internal","type":"InternalDNS"},{"address":"gpu-%04d","type":"Hostname"}],
"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
"nodeInfo":{"architecture":"amd64","bootID":"5b1f0a1e-0000-4000-8000-%012d","containerRuntimeVersion":"containerd://2.0.4","kernelVersion":"6.8.0-1019-aws","kubeProxyVersion":"","kubeletVersion":"v1.37.2","machineID":"ec2%029d","operatingSystem":"linux","osImage":"Ubuntu 24.04.1 LTS","systemUUID":"ec2%029d"},
"images":[%s],
"runtimeHandlers":[{"features":{"recursiveReadOnlyMounts":true,"userNamespaces":true},"name":"nvidia"},{"features":{"recursiveReadOnlyMounts":true,"userNamespaces":true},"name":"runc"}],
"features":{"supplementalGroupsPolicy":true}}}`,
		i, i, 5000+i, i, i%256, owner, i%256, i%256, i, i/256, i%256, i/256, i%256, i, i, i, i, images.String())
}

// nodeList returns a NodeList of n kubelet nodes (kubeletNode), the pool
// labels of every tenth owned by another stack's field manager.
func nodeList(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		owner := engine.NodeFieldManager("large")
		if i%10 == 9 {
			owner = engine.NodeFieldManager("other")
		}
		b.WriteString(kubeletNode(i, owner))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// trimmedNode is what a refresh keeps of a Node client-go decoded whole
// (trimNode).
func trimmedNode(u *unstructured.Unstructured) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: trimNode(runtime.DeepCopyJSONValue(u.Object).(map[string]any))}
}

// trimNode changes obj, a Node as client-go decodes it, into what a
// refresh keeps of it: of an object status, its capacity and allocatable;
// of each object entry of a list of managedFields in an object metadata,
// the fieldsV1 only where its manager is one of gpuform's.
func trimNode(obj map[string]any) map[string]any {
	if st, ok := obj["status"].(map[string]any); ok {
		for k := range st {
			if k != "capacity" && k != "allocatable" {
				delete(st, k)
			}
		}
	}
	md, _ := obj["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	for _, e := range entries {
		if e, ok := e.(map[string]any); ok {
			if m, _ := e["manager"].(string); !strings.HasPrefix(m, "gpuform") {
				delete(e, "fieldsV1")
			}
		}
	}
	return obj
}

// TestDecodeNodeKeepsWhatGpuformReads checks that a refresh's Nodes are
// client-go's decoding of them trimmed (trimmedNode), every way a list is
// decoded, and that everything gpuform reads of a Node reads the same from
// them as from the whole Node: the pool changes and conflicts the diff
// finds, the node's version in a saved plan, its GPU inventory, its
// taints; and that what was dropped was most of it.
func TestDecodeNodeKeepsWhatGpuformReads(t *testing.T) {
	body := nodeList(20)
	var whole unstructured.UnstructuredList
	if err := whole.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	for _, dec := range listDecoders {
		t.Run(dec.name, func(t *testing.T) {
			got, _, err := dec.decode(string(body), nodeGVK, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(whole.Items) {
				t.Fatalf("%d nodes, client-go %d", len(got), len(whole.Items))
			}
			for i := range got {
				if want := trimmedNode(&whole.Items[i]); !reflect.DeepEqual(got[i].Object, want.Object) {
					t.Errorf("node %d:\n got %#v\nwant %#v", i, got[i].Object, want.Object)
				}
			}
		})
	}

	got, _, err := decodeList(body, nodeGVK, false)
	if err != nil {
		t.Fatal(err)
	}
	wholeNodes := make([]*unstructured.Unstructured, len(whole.Items))
	for i := range whole.Items {
		wholeNodes[i] = &whole.Items[i]
	}
	// The pools change the MIG layout of half the nodes and take over
	// another stack's (a conflict): the diff reads labels, gpuform's
	// managedFields (fields it no longer sets) and the other stack's.
	d := &engine.Desired{Stack: "large", Pools: []*engine.NodePool{{
		Address: "pool.a100", Pool: "a100",
		Selector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
		Labels:   map[string]string{engine.LabelPool: "a100", engine.LabelMIGConfig: "all-3g.20gb"},
		MIGState: engine.LabelMIGState,
	}}}
	wantChanges, err := engine.DiffNodes(d, &engine.Live{Nodes: wholeNodes}, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotChanges, err := engine.DiffNodes(d, &engine.Live{Nodes: got}, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(wantChanges) != len(whole.Items) {
		t.Fatalf("the whole nodes need %d changes, want one per node (%d)", len(wantChanges), len(whole.Items))
	}
	conflicts := 0
	for i := range wantChanges {
		w, g := wantChanges[i], gotChanges[i]
		if g.Key != w.Key || g.Action != w.Action || g.Reason != w.Reason || !reflect.DeepEqual(g.Fields, w.Fields) {
			t.Errorf("change %d: got %s %s %v %q, whole nodes %s %s %v %q", i, g.Action, g.Key, g.Fields, g.Reason, w.Action, w.Key, w.Fields, w.Reason)
		}
		if w.Action == engine.ActionConflict {
			conflicts++
		}
	}
	if conflicts != 2 {
		t.Errorf("%d conflicts, want 2 (the nodes another stack's pool owns)", conflicts)
	}

	cat := mig.Default()
	var wholeJSON, gotJSON int
	for i := range got {
		if g, w := engine.NodeVersion(got[i]), engine.NodeVersion(wholeNodes[i]); g != w {
			t.Errorf("node %d: version %s, whole %s", i, g, w)
		}
		if g, w := capacity.InventoryOf(got[i], cat), capacity.InventoryOf(wholeNodes[i], cat); !reflect.DeepEqual(g, w) {
			t.Errorf("node %d: inventory %+v, whole %+v", i, g, w)
		}
		g, _, _ := unstructured.NestedSlice(got[i].Object, "spec", "taints")
		w, _, _ := unstructured.NestedSlice(wholeNodes[i].Object, "spec", "taints")
		if len(g) != 1 || !reflect.DeepEqual(g, w) {
			t.Errorf("node %d: taints %v, whole %v", i, g, w)
		}
		if g, w := len(got[i].GetManagedFields()), len(wholeNodes[i].GetManagedFields()); g != w {
			t.Errorf("node %d: %d managedFields entries, whole %d", i, g, w)
		}
		gj, _ := json.Marshal(got[i].Object)
		wj, _ := json.Marshal(wholeNodes[i].Object)
		gotJSON, wholeJSON = gotJSON+len(gj), wholeJSON+len(wj)
	}
	if gotJSON*3 > wholeJSON {
		t.Errorf("the trimmed nodes are %d bytes of JSON against %d whole: want under a third", gotJSON, wholeJSON)
	}
}

// TestDecodeNodeRejectsBrokenFieldSets checks that a malformed fieldsV1 of
// gpuform's field manager, which a node's diff reads, is an error.
func TestDecodeNodeRejectsBrokenFieldSets(t *testing.T) {
	body := `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"n","managedFields":[{"fieldsV1":{"f:metadata":{"f:labels":{"f:x":{}}}},"manager":"gpuform-large"}]}}]}`
	broken := strings.Replace(body, `{"f:x":{}}`, `{"f:x":}`, 1)
	if _, _, err := decodeList([]byte(body), nodeGVK, false); err != nil {
		t.Fatalf("well-formed: %v", err)
	}
	if _, _, err := decodeList([]byte(broken), nodeGVK, false); err == nil {
		t.Fatal("a malformed fieldsV1 decoded without an error")
	}
}

// BenchmarkDecodeNodes decodes 500 kubelet nodes (kubeletNode) as a
// refresh lists them (trimmed: nodeObject), whole as any other kind's
// items, and with client-go's unstructured JSON decoding.
func BenchmarkDecodeNodes(b *testing.B) {
	data := nodeList(500)
	for _, bc := range []struct {
		name   string
		decode func() (int, error)
	}{
		{"trimmed", func() (int, error) {
			items, _, err := decodeList(data, nodeGVK, false)
			return len(items), err
		}},
		{"whole", func() (int, error) {
			items, _, err := decodeList(data, schema.GroupVersionKind{Version: "v1", Kind: "NodeDecodedWhole"}, false)
			return len(items), err
		}},
		{"client-go", func() (int, error) {
			var l unstructured.UnstructuredList
			err := l.UnmarshalJSON(data)
			return len(l.Items), err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if n, err := bc.decode(); err != nil || n != 500 {
					b.Fatalf("%d nodes, %v", n, err)
				}
			}
		})
	}
}
