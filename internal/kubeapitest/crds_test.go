package kubeapitest_test

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gpuform/gpuform/engine/kinds"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

var srv *kubeapitest.Server

func TestMain(m *testing.M) { kubeapitest.Main(m, &srv) }

// crdsOnce applies every set of upstream CRDs to the package's server once.
var crdsOnce = sync.OnceValue(func() error {
	cfg, err := srv.RESTConfig()
	if err != nil {
		return err
	}
	return kubeapitest.ApplyCRDs(testContext(), cfg, kubeapitest.CRDSets()...)
})

func applyAll(t *testing.T) {
	t.Helper()
	if err := crdsOnce(); err != nil {
		t.Fatalf("apply the upstream CRDs: %v", err)
	}
}

// TestCommittedCRDsAreUpstream checks that the committed copies are the
// files at the upstream tags byte for byte (their git blob hashes, as
// `git hash-object` computes them, are those testdata/crds/README.md
// names), and that the module-cache sets come at the versions go.mod pins.
func TestCommittedCRDsAreUpstream(t *testing.T) {
	blobs := map[string]string{
		"kserve.yaml":           "1e37d05b7a741eb40b9eb01c378dc9dc80eab3d9", // kserve v0.20.0 config/crd/full/serving.kserve.io_inferenceservices.yaml
		"volcano.yaml":          "6ce47deddc0018ca9bf95e364e7fe3aa3ed271bc", // volcano v1.15.1 config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml
		"gpu-operator-dra.yaml": "30ff8543d7025f0abb110a4575c8a79e571d54dc", // gpu-operator v26.7.0 deployments/gpu-operator/crds/nvidia.com_gpuclusters.yaml
	}
	readme, err := os.ReadFile(filepath.Join(kubeapitest.CRDDir(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range blobs {
		src, err := os.ReadFile(filepath.Join(kubeapitest.CRDDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(src))
		h.Write(src)
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
			t.Errorf("%s has git blob %s, not upstream's %s: restore the file as it is at the tag", file, got, want)
		}
		if !strings.Contains(string(readme), want) {
			t.Errorf("testdata/crds/README.md does not name the blob %s of %s", want, file)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(kubeapitest.CRDDir(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{"sigs.k8s.io/kueue", "github.com/NVIDIA/gpu-operator", "github.com/prometheus-operator/prometheus-operator"} {
		dir, err := kubeapitest.ModuleDir(testContext(), module)
		if err != nil {
			t.Fatal(err)
		}
		_, version, _ := strings.Cut(filepath.Base(dir), "@")
		if !strings.Contains(string(gomod), module+" "+version+"\n") {
			t.Errorf("module %s came at %s, which testdata/crds/go.mod does not require", module, version)
		}
	}
}

// TestUpstreamCRDsServeEveryKind applies every set and checks that each
// optional kind of the registry (each kind a CRD serves) is served at the
// version gpuform writes, with the upstream schema: typed fields under
// spec, not the stand-ins' x-kubernetes-preserve-unknown-fields, so a wrong
// field is refused.
func TestUpstreamCRDsServeEveryKind(t *testing.T) {
	applyAll(t)
	byKind := map[schema.GroupKind]*unstructured.Unstructured{}
	for _, set := range kubeapitest.CRDSets() {
		crds, err := kubeapitest.CRDs(testContext(), set)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range crds {
			group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
			byKind[schema.GroupKind{Group: group, Kind: kind}] = c
		}
	}
	for _, e := range kinds.Builtin().Entries() {
		if !e.Kind.Optional {
			continue
		}
		c := byKind[e.Kind.GroupKind()]
		if c == nil {
			t.Errorf("no upstream CRD serves %s: add it to a set in internal/kubeapitest/crds.go", e.Kind.GroupVersionKind)
			continue
		}
		versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		var root map[string]any
		for _, v := range versions {
			vm := v.(map[string]any)
			if vm["name"] == e.Kind.Version && vm["served"] == true {
				root, _, _ = unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
			}
		}
		if root == nil {
			t.Errorf("the upstream CRD %s does not serve %s at %s with a schema", c.GetName(), e.Kind.Kind, e.Kind.Version)
			continue
		}
		// The stand-ins kept unknown fields under spec (WorkloadPriorityClass
		// has no spec: its fields are at the top).
		typed := root
		if spec, ok, _ := unstructured.NestedMap(root, "properties", "spec"); ok {
			typed = spec
		}
		props, _ := typed["properties"].(map[string]any)
		if root["x-kubernetes-preserve-unknown-fields"] == true || typed["x-kubernetes-preserve-unknown-fields"] == true || len(props) == 0 {
			t.Errorf("the CRD %s keeps unknown fields: not an upstream schema", c.GetName())
		}
	}
}

// TestStrictValidationRefusesWrongFields: with the upstream schemas the
// API server refuses, under strict field validation, the mistakes the
// stand-in CRDs let through: a misspelt field of a ClusterQueue, a Volcano
// weight over the Queue CRD's maximum, a ClusterPolicy without the
// components the CRD requires.
func TestStrictValidationRefusesWrongFields(t *testing.T) {
	applyAll(t)
	ctx := testContext()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	cases := []struct {
		name     string
		resource schema.GroupVersionResource
		obj      string
		want     string
	}{
		{"misspelt ClusterQueue field", schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"},
			`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"wrong"},"spec":{"cohort":"bank"}}`, `unknown field "spec.cohort"`},
		{"Volcano weight over the maximum", schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"},
			`{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"heavy"},"spec":{"weight":65536}}`, "spec.weight"},
		{"ClusterPolicy without its components", schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"},
			`{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"bare"},"spec":{"migManager":{"enabled":true}}}`, "spec.driver: Required value"},
		// KServe's schema (testdata/crds/kserve.yaml): the predictor is typed,
		// so a misspelt replica count and a pod field that does not exist
		// are refused, as they would be on a real cluster.
		{"misspelt InferenceService replica count", schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"},
			`{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"wrong","namespace":"default"},"spec":{"predictor":{"minReplica":1,"model":{"modelFormat":{"name":"pytorch"}}}}}`, `unknown field "spec.predictor.minReplica"`},
		{"InferenceService pod field that does not exist", schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"},
			`{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"wrong","namespace":"default"},"spec":{"predictor":{"schedulerQueue":"q","model":{"modelFormat":{"name":"pytorch"}}}}}`, `unknown field "spec.predictor.schedulerQueue"`},
		// What gpuform writes for a model's autoscaling, sandboxed runtime and
		// tainted pool, against the same schemas: KServe's autoScaling block
		// (enums for the metric backend), the predictor's runtimeClassName,
		// and Kueue's ResourceFlavor taints and tolerations.
		{"InferenceService autoscaling backend outside the enum", schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"},
			`{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"wrong","namespace":"default"},"spec":{"predictor":{"autoScaling":{"metrics":[{"type":"External","external":{"metric":{"backend":"dcgm","query":"up"},"target":{"type":"Value","value":"70"}}}]},"model":{"modelFormat":{"name":"pytorch"}}}}}`, "spec.predictor.autoScaling.metrics[0].external.metric.backend"},
		{"misspelt InferenceService scale-down window", schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"},
			`{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"wrong","namespace":"default"},"spec":{"predictor":{"autoScaling":{"behavior":{"scaleDown":{"stabilisationWindowSeconds":600}}},"model":{"modelFormat":{"name":"pytorch"}}}}}`, `unknown field "spec.predictor.autoScaling.behavior.scaleDown.stabilisationWindowSeconds"`},
		{"InferenceService runtime class that is not a string", schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"},
			`{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","metadata":{"name":"wrong","namespace":"default"},"spec":{"predictor":{"runtimeClassName":5,"model":{"modelFormat":{"name":"pytorch"}}}}}`, "spec.predictor.runtimeClassName"},
		{"misspelt ResourceFlavor taint field", schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"},
			`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"wrong"},"spec":{"nodeTaints":[{"key":"k","effect":"NoSchedule","valu":"v"}]}}`, `unknown field "spec.nodeTaints[0].valu"`},
		{"misspelt ResourceFlavor toleration field", schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"},
			`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"wrong"},"spec":{"tolerations":[{"key":"k","operator":"Exists","efect":"NoSchedule"}]}}`, `unknown field "spec.tolerations[0].efect"`},
		// The GPU Operator's NVIDIADriver (a pool's driver pin): its driver
		// and kernel module types are enums, and its fields typed.
		{"NVIDIADriver of an unknown kernel module type", schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "nvidiadrivers"},
			`{"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriver","metadata":{"name":"bare"},"spec":{"driverType":"gpu","image":"nvcr.io/nvidia/driver","kernelModuleType":"closed"}}`, "spec.kernelModuleType"},
		{"NVIDIADriver of an unknown type", schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "nvidiadrivers"},
			`{"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriver","metadata":{"name":"odd"},"spec":{"driverType":"cuda","image":"nvcr.io/nvidia/driver"}}`, "spec.driverType"},
		{"misspelt NVIDIADriver node selector", schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "nvidiadrivers"},
			`{"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriver","metadata":{"name":"wrong"},"spec":{"driverType":"gpu","image":"nvcr.io/nvidia/driver","nodeSelectors":{"a":"b"}}}`, `unknown field "spec.nodeSelectors"`},
		// The Prometheus Operator's PrometheusRule: a misspelt rule field,
		// a "for" that is not a Prometheus duration, a rule without expr.
		{"misspelt PrometheusRule field", schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"},
			`{"apiVersion":"monitoring.coreos.com/v1","kind":"PrometheusRule","metadata":{"name":"wrong","namespace":"default"},"spec":{"groups":[{"name":"g","rules":[{"alert":"A","expr":"up == 0","severity":"critical"}]}]}}`, `unknown field "spec.groups[0].rules[0].severity"`},
		{"PrometheusRule duration", schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"},
			`{"apiVersion":"monitoring.coreos.com/v1","kind":"PrometheusRule","metadata":{"name":"wrong","namespace":"default"},"spec":{"groups":[{"name":"g","rules":[{"alert":"A","expr":"up == 0","for":"5 minutes"}]}]}}`, "spec.groups[0].rules[0].for"},
		{"PrometheusRule without expr", schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"},
			`{"apiVersion":"monitoring.coreos.com/v1","kind":"PrometheusRule","metadata":{"name":"wrong","namespace":"default"},"spec":{"groups":[{"name":"g","rules":[{"alert":"A"}]}]}}`, "spec.groups[0].rules[0].expr: Required value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var u unstructured.Unstructured
			if err := u.UnmarshalJSON([]byte(tc.obj)); err != nil {
				t.Fatal(err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(tc.resource)
			if ns := u.GetNamespace(); ns != "" {
				ri = dyn.Resource(tc.resource).Namespace(ns)
			}
			_, err := ri.Create(ctx, &u, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict, DryRun: []string{metav1.DryRunAll}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("create: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestClusterPolicyFixtureIsValid: the ClusterPolicy the integration tests
// create is one the GPU Operator's CRD accepts (it requires every
// component's block).
func TestClusterPolicyFixtureIsValid(t *testing.T) {
	applyAll(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.CreateClusterPolicy(testContext(), cfg, "fixture"); err != nil {
		t.Fatalf("the fixture ClusterPolicy is refused by the upstream CRD: %v", err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	cp, err := dyn.Resource(schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}).Get(testContext(), "fixture", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(cp.Object, "spec", "mig", "strategy"); s != "single" {
		t.Errorf("the fixture's MIG strategy is %q, want the chart's default single", s)
	}
}

// TestWarningsCatchUnknownFields: a write the API server accepts with a
// warning (fieldValidation=Warn drops the unknown field) is what the
// Warnings recorder reports, so kubeapitest.Main fails a package where any
// client got one.
func TestWarningsCatchUnknownFields(t *testing.T) {
	applyAll(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	w := &kubeapitest.Warnings{}
	cfg.WarningHandler = w
	dyn := dynamic.NewForConfigOrDie(cfg)
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"warned"},"spec":{"nodeLabel":{"a":"b"}}}`)); err != nil {
		t.Fatal(err)
	}
	rf := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	if _, err := dyn.Resource(rf).Create(testContext(), &u, metav1.CreateOptions{FieldValidation: metav1.FieldValidationWarn, DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if fw := w.FieldWarnings(); len(fw) != 1 || !strings.Contains(fw[0], `unknown field "spec.nodeLabel"`) || w.Err() == nil {
		t.Errorf("field warnings %q (all: %q), want the unknown spec.nodeLabel", fw, w.All())
	}
}
