package kinds_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine/kinds"
)

// widget is a fake optional kind, in tests only.
func widget(rank int) kinds.Entry {
	return kinds.Entry{
		Kind:        kinds.Kind{GroupVersionKind: schema.GroupVersionKind{Group: "example.gpuform.dev", Version: "v1alpha1", Kind: "Widget"}, Namespaced: true, Optional: true},
		Resource:    "widgets",
		Use:         kinds.Managed,
		Rank:        rank,
		InstallHint: "install the widget operator",
		Access:      kinds.Access{Plan: kinds.VerbsRead, Drift: kinds.VerbsRead, Apply: kinds.VerbList | kinds.VerbCreate | kinds.VerbPatch | kinds.VerbDelete},
	}
}

func gk(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }

// The managed kinds, in apply order: a tenant's RoleBindings after what
// limits the tenant.
func TestBuiltinManagedInApplyOrder(t *testing.T) {
	want := []string{
		"/v1, Kind=Namespace", "scheduling.k8s.io/v1, Kind=PriorityClass", "resource.k8s.io/v1, Kind=DeviceClass", "kueue.x-k8s.io/v1beta2, Kind=WorkloadPriorityClass",
		"kueue.x-k8s.io/v1beta2, Kind=ResourceFlavor", "scheduling.volcano.sh/v1beta1, Kind=Queue", "nvidia.com/v1alpha1, Kind=NVIDIADriver", "/v1, Kind=ConfigMap",
		"/v1, Kind=ResourceQuota",
		"admissionregistration.k8s.io/v1, Kind=ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1, Kind=MutatingAdmissionPolicy",
		"kueue.x-k8s.io/v1beta2, Kind=MultiKueueCluster", "kueue.x-k8s.io/v1beta2, Kind=MultiKueueConfig", "kueue.x-k8s.io/v1beta2, Kind=AdmissionCheck",
		"admissionregistration.k8s.io/v1, Kind=ValidatingAdmissionPolicyBinding", "admissionregistration.k8s.io/v1, Kind=MutatingAdmissionPolicyBinding",
		"kueue.x-k8s.io/v1beta2, Kind=Cohort", "kueue.x-k8s.io/v1beta2, Kind=ClusterQueue", "kueue.x-k8s.io/v1beta2, Kind=LocalQueue", "rbac.authorization.k8s.io/v1, Kind=RoleBinding", "monitoring.coreos.com/v1, Kind=PrometheusRule",
		"resource.k8s.io/v1, Kind=ResourceClaimTemplate", "serving.kserve.io/v1beta1, Kind=InferenceService",
	}
	var got []string
	for _, k := range kinds.Builtin().Managed() {
		got = append(got, k.GroupVersionKind.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("Managed() =\n%v\nwant\n%v", got, want)
	}
}

// The ranks order kinds as the switch on kind names they replace did:
// the same order and the same ties, pair by pair; but a RoleBinding (a
// tenant's access) comes after everything that limits the tenant, the
// admission policies and the queues included (docs/security.md,
// "Enforcement before access").
func TestBuiltinRanksKeepTheApplyOrder(t *testing.T) {
	before := map[schema.GroupKind]int{
		gk("", "Namespace"): 0, gk("scheduling.k8s.io", "PriorityClass"): 1, gk("kueue.x-k8s.io", "WorkloadPriorityClass"): 2,
		gk("kueue.x-k8s.io", "ResourceFlavor"): 3, gk("scheduling.volcano.sh", "Queue"): 4, gk("", "ConfigMap"): 5,
		gk("", "ResourceQuota"): 6,
		gk("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): 8, gk("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): 9,
		gk("kueue.x-k8s.io", "ClusterQueue"): 10, gk("kueue.x-k8s.io", "LocalQueue"): 11, gk("rbac.authorization.k8s.io", "RoleBinding"): 12, gk("", "Node"): 13,
		gk("serving.kserve.io", "InferenceService"): 14, gk("nvidia.com", "ClusterPolicy"): 15,
	}
	r := kinds.Builtin()
	sign := func(n int) int { return min(max(n, -1), 1) }
	for a, ra := range before {
		for b, rb := range before {
			if got, want := sign(r.Rank(a)-r.Rank(b)), sign(ra-rb); got != want {
				t.Errorf("%s vs %s: ranks %d and %d order them %d, want %d", a, b, r.Rank(a), r.Rank(b), got, want)
			}
		}
		if r.Rank(a) >= r.Rank(gk("example.com", "Unknown")) {
			t.Errorf("%s ranks %d, not before an unknown kind (%d)", a, r.Rank(a), r.Rank(gk("example.com", "Unknown")))
		}
	}
}

func TestBuiltinLookups(t *testing.T) {
	r := kinds.Builtin()
	tests := []struct {
		gk       schema.GroupKind
		inPlan   bool
		hint     string
		resource string
	}{
		{gk("", "Namespace"), true, kinds.DefaultInstallHint, "namespaces"},
		{gk("kueue.x-k8s.io", "LocalQueue"), true, "install Kueue (https://kueue.sigs.k8s.io) or set scheduler = \"none\" in the gpuform block", "localqueues"},
		{gk("scheduling.volcano.sh", "Queue"), true, "install Volcano or set scheduler = \"none\" in the gpuform block", "queues"},
		{gk("serving.kserve.io", "InferenceService"), true, "install KServe (https://kserve.github.io), or remove the model blocks", "inferenceservices"},
		{gk("", "Node"), true, kinds.DefaultInstallHint, "nodes"},
		{gk("nvidia.com", "ClusterPolicy"), true, "install the NVIDIA GPU Operator", "clusterpolicies"},
		{gk("", "Pod"), false, kinds.DefaultInstallHint, "pods"},
		{gk("coordination.k8s.io", "Lease"), false, kinds.DefaultInstallHint, "leases"},
		{gk("", "Secret"), false, kinds.DefaultInstallHint, ""},
	}
	for _, tt := range tests {
		t.Run(tt.gk.String(), func(t *testing.T) {
			if got := r.InPlan(tt.gk); got != tt.inPlan {
				t.Errorf("InPlan = %v, want %v", got, tt.inPlan)
			}
			if got := r.InstallHint(tt.gk); got != tt.hint {
				t.Errorf("InstallHint = %q, want %q", got, tt.hint)
			}
			e, ok := r.Lookup(tt.gk)
			if ok != (tt.resource != "") || e.Resource != tt.resource {
				t.Errorf("Lookup = %q, %v; want resource %q", e.Resource, ok, tt.resource)
			}
		})
	}
}

func TestNewRefusesBadEntries(t *testing.T) {
	noVersion := widget(0)
	noVersion.Version = ""
	plural := widget(0)
	plural.Resource = "Widgets"
	noUse := widget(0)
	noUse.Use = 0
	badVerbs := widget(0)
	badVerbs.Access.Apply = 1 << 15
	tests := []struct {
		name    string
		entries []kinds.Entry
		want    string
	}{
		{"duplicate", []kinds.Entry{widget(0), widget(1)}, "twice"},
		{"no version", []kinds.Entry{noVersion}, "version"},
		{"resource not lower-case", []kinds.Entry{plural}, "lower-case"},
		{"no use", []kinds.Entry{noUse}, "use"},
		{"unknown verbs", []kinds.Entry{badVerbs}, "verbs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kinds.New(tt.entries...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error about %q", err, tt.want)
			}
		})
	}
	if _, err := kinds.Builtin().With(widget(0), widget(0)); err == nil {
		t.Error("With accepted one kind twice")
	}
}

// A registry cannot be changed through what it returns.
func TestRegistryIsImmutable(t *testing.T) {
	r := kinds.Builtin()
	cr := gk("rbac.authorization.k8s.io", "ClusterRole")
	e, _ := r.Lookup(cr)
	e.Access.ResourceNames[0] = "cluster-admin"
	for i := range r.Entries() {
		r.Entries()[i].Access.ResourceNames = nil
	}
	if e, _ := r.Lookup(cr); !slices.Equal(e.Access.ResourceNames, []string{"admin", "edit", "view"}) {
		t.Errorf("the registry changed: %v", e.Access.ResourceNames)
	}
	if _, err := r.With(widget(55)); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup(widget(0).GroupKind()); ok {
		t.Error("With changed the registry it was called on")
	}
}

// A kind added to a registry takes its place in the apply order, gives its
// own install hint, and is part of the plans.
func TestWithFakeKind(t *testing.T) {
	r, err := kinds.Builtin().With(widget(55)) // between ConfigMap (50) and ResourceQuota (60)
	if err != nil {
		t.Fatal(err)
	}
	w := widget(0).GroupKind()
	if !r.InPlan(w) || r.InstallHint(w) != "install the widget operator" || r.Rank(w) != 55 {
		t.Errorf("InPlan %v, InstallHint %q, Rank %d", r.InPlan(w), r.InstallHint(w), r.Rank(w))
	}
	var names []string
	for _, k := range r.Managed() {
		names = append(names, k.Kind)
	}
	i := slices.Index(names, "Widget")
	if i < 1 || names[i-1] != "ConfigMap" || names[i+1] != "ResourceQuota" {
		t.Errorf("Managed() = %v: the widget is not between ConfigMap and ResourceQuota", names)
	}
}

func TestVerbsStrings(t *testing.T) {
	tests := []struct {
		v    kinds.Verbs
		want []string
	}{
		{0, nil},
		{kinds.VerbsRead, []string{"get", "list", "watch"}},
		{kinds.VerbDelete | kinds.VerbList | kinds.VerbBind, []string{"list", "delete", "bind"}},
		{kinds.VerbUpdate | kinds.VerbCreate | kinds.VerbPatch, []string{"create", "update", "patch"}},
	}
	for _, tt := range tests {
		if got := tt.v.Strings(); !slices.Equal(got, tt.want) {
			t.Errorf("%#x.Strings() = %v, want %v", uint(tt.v), got, tt.want)
		}
	}
}

// TestUpgradeHints: the kinds whose version implies a release say which
// (docs/compatibility.md quotes these), and the others name the version.
func TestUpgradeHints(t *testing.T) {
	reg := kinds.Builtin()
	gvk := func(g, v, k string) kinds.Kind {
		return kinds.Kind{GroupVersionKind: schema.GroupVersionKind{Group: g, Version: v, Kind: k}}
	}
	for _, tc := range []struct {
		kind kinds.Kind
		want string
	}{
		{gvk("kueue.x-k8s.io", "v1beta2", "ClusterQueue"), "upgrade to Kueue v0.15 or later (gpuform writes kueue.x-k8s.io/v1beta2)"},
		{gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"), "upgrade to Kubernetes v1.30 or later (gpuform writes admissionregistration.k8s.io/v1)"},
		{gvk("serving.kserve.io", "v1beta1", "InferenceService"), "upgrade to KServe v0.16 or later (gpuform writes serving.kserve.io/v1beta1)"},
		{gvk("scheduling.volcano.sh", "v1beta1", "Queue"), "upgrade to Volcano v1.3 or later (gpuform writes scheduling.volcano.sh/v1beta1)"},
		{gvk("example.gpuform.dev", "v1", "Widget"), "upgrade what serves Widget to a release that serves example.gpuform.dev/v1"},
	} {
		if got := reg.UpgradeHint(tc.kind); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.kind.Kind, got, tc.want)
		}
	}
}

// TestOwnedWholeKinds checks which kinds gpuform owns whole: those that
// carry a tenant's limits (docs/security.md, "Guard objects owned whole"),
// and that only a managed kind may be.
func TestOwnedWholeKinds(t *testing.T) {
	want := []string{"ResourceQuota", "RoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ClusterQueue", "Cohort", "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "LocalQueue", "Queue"}
	var got []string
	r := kinds.Builtin()
	for _, e := range r.Entries() {
		if e.OwnedWhole {
			got = append(got, e.Kind.Kind)
		}
		if r.OwnedWhole(e.GroupKind()) != e.OwnedWhole {
			t.Errorf("Registry.OwnedWhole(%s) disagrees with its entry", e.GroupKind())
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("kinds owned whole = %v, want %v", got, want)
	}
	_, err := kinds.New(kinds.Entry{Kind: kinds.Kind{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Node"}}, Resource: "nodes", Use: kinds.Patched, OwnedWhole: true})
	if err == nil || !strings.Contains(err.Error(), "only a managed kind can be owned whole") {
		t.Errorf("a patched kind owned whole: error %v", err)
	}
}
