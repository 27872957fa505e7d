package kubernetes

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// isvcList returns a JSON list of n InferenceServices as the API server
// sends them to refresh (metadata, managedFields, spec).
func isvcList(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceServiceList","metadata":{"resourceVersion":"123"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"annotations":{"gpuform.dev/address":"model.m-%05d","serving.kserve.io/deploymentMode":"RawDeployment"},"creationTimestamp":"2026-11-30T10:00:00Z","generation":1,"labels":{"app.kubernetes.io/managed-by":"gpuform","gpuform.dev/stack":"large","kueue.x-k8s.io/priority-class":"batch","kueue.x-k8s.io/queue-name":"default"},"managedFields":[{"apiVersion":"serving.kserve.io/v1beta1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:gpuform.dev/address":{},"f:serving.kserve.io/deploymentMode":{}},"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:gpuform.dev/stack":{},"f:kueue.x-k8s.io/priority-class":{},"f:kueue.x-k8s.io/queue-name":{}}},"f:spec":{"f:predictor":{"f:maxReplicas":{},"f:minReplicas":{},"f:model":{"f:modelFormat":{"f:name":{}},"f:resources":{"f:limits":{"f:nvidia.com/mig-1g.10gb":{}},"f:requests":{"f:nvidia.com/mig-1g.10gb":{}}},"f:storageUri":{}},"f:nodeSelector":{"f:gpuform.dev/pool":{}},"f:priorityClassName":{}}}},"manager":"gpuform","operation":"Apply","time":"2026-11-30T10:00:00Z"}],"name":"m-%05d","namespace":"team-%04d","resourceVersion":"%d","uid":"6f0c2a3e-0000-4000-8000-%012d"},"spec":{"predictor":{"maxReplicas":%d,"minReplicas":1,"model":{"modelFormat":{"name":"pytorch"},"resources":{"limits":{"nvidia.com/mig-1g.10gb":"1"},"requests":{"nvidia.com/mig-1g.10gb":"1"}},"storageUri":"s3://models/team-%04d/m-%05d/v1"},"nodeSelector":{"gpuform.dev/pool":"a100"},"priorityClassName":"batch"}}}`,
			i, i, i%1000, 1000+i, i, 1+i%4, i%1000, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkDecodeList decodes one page of 500 InferenceServices (refresh's
// page size) with decodeList and, for comparison in the same run, with
// client-go's unstructured JSON decoding.
func BenchmarkDecodeList(b *testing.B) {
	data := isvcList(500)
	gvk := schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}
	b.Run("decodeList", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			items, _, err := decodeList(data, gvk, true)
			if err != nil || len(items) != 500 {
				b.Fatalf("%d items, %v", len(items), err)
			}
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var l unstructured.UnstructuredList
			if err := l.UnmarshalJSON(data); err != nil || len(l.Items) != 500 {
				b.Fatalf("%d items, %v", len(l.Items), err)
			}
		}
	})
}

// TestDecodeListBenchmarkInput checks that the benchmark's list decodes
// to the same objects both ways, so the comparison is fair.
func TestDecodeListBenchmarkInput(t *testing.T) {
	data := isvcList(3)
	gvk := schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}
	items, _, err := decodeList(data, gvk, false)
	if err != nil {
		t.Fatal(err)
	}
	var l unstructured.UnstructuredList
	if err := l.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || len(l.Items) != 3 {
		t.Fatalf("%d and %d items, want 3", len(items), len(l.Items))
	}
	for i := range items {
		if fmt.Sprint(items[i].Object) != fmt.Sprint(l.Items[i].Object) {
			t.Errorf("item %d differs:\n%v\n%v", i, items[i].Object, l.Items[i].Object)
		}
	}
}

// BenchmarkCutList cuts the items out of the same page of 500
// InferenceServices (listCutter), decoding none: the part of a refresh that
// every byte of every LIST goes through.
func BenchmarkCutList(b *testing.B) {
	data := isvcList(500)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := newBytesCutter(data).list(func([]byte) { n++ }, func([]byte) error { return nil })
		if err != nil || n != 500 {
			b.Fatalf("%d items, %v", n, err)
		}
	}
}
