package engine_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// A driver pin warns, at its pool, unless a ClusterPolicy manages drivers
// with NVIDIADrivers; without a pin, or without a ClusterPolicy (the kind
// is then missing, which discovery reports), nothing.
func TestDriverPinWarnings(t *testing.T) {
	pin := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": map[string]any{"name": "h200"}}}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "y"}}}
	policy := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": map[string]any{"name": "cluster-policy"}, "spec": spec}}
	}
	tests := []struct {
		name     string
		objects  []*engine.Object
		policies []*unstructured.Unstructured
		want     string
	}{
		{"pin, driver CRD off", []*engine.Object{{Address: "pool.h200", Object: pin}}, []*unstructured.Unstructured{policy(map[string]any{"driver": map[string]any{"enabled": true}})},
			"pool.h200 pins its driver with NVIDIADriver h200, but ClusterPolicy cluster-policy does not manage drivers with NVIDIADrivers"},
		{"pin, driver CRD on", []*engine.Object{{Address: "pool.h200", Object: pin}}, []*unstructured.Unstructured{policy(map[string]any{"driver": map[string]any{"useNvidiaDriverCRD": true}})}, ""},
		{"pin, no ClusterPolicy", []*engine.Object{{Address: "pool.h200", Object: pin}}, nil, ""},
		{"no pin", []*engine.Object{{Address: "gpuform", Object: cm}}, []*unstructured.Unstructured{policy(map[string]any{})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diags := engine.DriverPinWarnings(&engine.Desired{Objects: tt.objects}, &engine.Live{ClusterPolicies: tt.policies})
			if tt.want == "" {
				if len(diags) > 0 {
					t.Fatalf("warnings %v, want none", engine.WarningTexts(diags))
				}
				return
			}
			if len(diags) != 1 || !strings.HasPrefix(diags[0].Summary, tt.want) || diags[0].Extra != engine.BlockAddress("pool.h200") {
				t.Fatalf("warnings %v (%v), want one at pool.h200 starting %q", engine.WarningTexts(diags), diags, tt.want)
			}
		})
	}
}
