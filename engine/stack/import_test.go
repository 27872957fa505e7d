package stack

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// TestImportTarget: import takes only an object a block of the
// configuration produces, at that block's address, in a namespace the
// stack manages; KIND may be any case or Kind.group.
func TestImportTarget(t *testing.T) {
	obj := func(kind, apiVersion, ns, name, address string) *engine.Object {
		return &engine.Object{Address: address, Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}}}}
	}
	d := &engine.Desired{Stack: "s", Objects: []*engine.Object{
		obj("Namespace", "v1", "", "team-a", "tenant.a"),
		obj("ResourceQuota", "v1", "team-a", "gpuform", "tenant.a"),
		obj("ConfigMap", "v1", "gpu-operator", "default-mig-parted-config", "gpuform"),
		obj("ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1", "", "gpuform-s-p", "gpuform"),
	}}
	for _, c := range []struct{ address, id, want string }{
		{"tenant.a", "Namespace/team-a", ""},
		{"tenant.a", "resourcequota/team-a/gpuform", ""},
		{"gpuform", "ValidatingAdmissionPolicy.admissionregistration.k8s.io/gpuform-s-p", ""},
		{"gpuform", "ValidatingAdmissionPolicy.rbac.authorization.k8s.io/gpuform-s-p", "no block of the configuration produces"},
		{"tenant.b", "Namespace/team-a", "is produced by tenant.a, not tenant.b"},
		{"gpuform", "ConfigMap/gpu-operator/default-mig-parted-config", "which stack s does not manage"},
		{"tenant.a", "ResourceQuota/team-b/gpuform", "no block of the configuration produces"},
		{"tenant.a", "team-a", "is not KIND/NAMESPACE/NAME"},
	} {
		_, err := importTarget(d, c.address, c.id)
		switch {
		case err != nil && (c.want == "" || !strings.Contains(err.Error(), c.want)):
			t.Errorf("import %s %s: %v, want %q", c.address, c.id, err, c.want)
		case err == nil && c.want != "":
			t.Errorf("import %s %s: accepted, want %q", c.address, c.id, c.want)
		}
	}
}
